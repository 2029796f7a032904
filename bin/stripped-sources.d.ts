// Types of stripped-sources.js, for the tests that check it.
export declare const strippedDir: string;
export declare function digestOf(text: string): string;
export declare function currentSources(): Map<string, string>;
export declare function useStrippedSources(): void;
