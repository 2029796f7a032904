// A <button data-copy="id"> copies the text of element `id` (the new token on the agent console, the
// API reference's examples). A button marked hidden is one the page does without when scripts do
// not run: it is shown here, where it works.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  const label = button.textContent;
  button.addEventListener('click', async () => {
    const text = document.getElementById(button.dataset.copy).textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      // No clipboard (a page not served over https, a refused permission): select it to copy by hand.
      const range = document.createRange();
      range.selectNodeContents(document.getElementById(button.dataset.copy));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = 'Selected';
    }
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });
}
