// `hardhat node` for the payment tests (test/support/chain.ts): Hardhat's simulated network with its
// defaults (chain id 31337, automine, the well-known development accounts).
export default {};
