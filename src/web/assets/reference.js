// The API reference's filter box (/docs): typing narrows the table of contents and the sections to
// the operations whose id, tool, tag, method, path, summary or description hold every typed word.
// Without this script the box stays hidden and every section is shown.
const form = document.querySelector('form.op-search');
if (form) {
  const input = form.querySelector('input');
  const count = document.getElementById('op-search-count');
  const entries = [...document.querySelectorAll('.toc li[data-op]')].map((item) => {
    const section = document.getElementById(item.dataset.op);
    const about = [
      section.dataset.terms,
      section.querySelector('h3')?.textContent,
      section.querySelector('.op-summary')?.textContent,
      section.querySelector('.op-about')?.textContent,
    ];
    return { item, section, text: about.join(' ').toLowerCase() };
  });
  const groups = [...document.querySelectorAll('.toc li[data-tag]')].map((item) => ({
    item,
    section: document.getElementById(`tag-${item.dataset.tag}`),
    entries: entries.filter((entry) => item.contains(entry.item)),
  }));
  const others = [document.getElementById('mcp-example'), document.getElementById('errors')];
  const filter = () => {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const entry of entries) {
      const match = words.every((word) => entry.text.includes(word));
      entry.item.hidden = !match;
      entry.section.hidden = !match;
      if (match) shown++;
    }
    for (const group of groups) {
      const empty = group.entries.every((entry) => entry.item.hidden);
      group.item.hidden = empty;
      if (group.section) group.section.hidden = empty;
    }
    for (const other of others) if (other) other.hidden = words.length > 0;
    count.textContent = words.length
      ? `${shown} of ${entries.length} operations match.`
      : `${entries.length} operations.`;
  };
  form.hidden = false;
  input.addEventListener('input', filter);
  // Enter in the box goes to the first operation shown.
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const first = entries.find((entry) => !entry.item.hidden);
    if (first) location.hash = first.section.id;
  });
  filter();
}
