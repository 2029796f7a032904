// A <button data-copy="id"> copies the text of element `id` (the new token on the agent console).
for (const button of document.querySelectorAll('button[data-copy]'))
  button.addEventListener('click', () =>
    navigator.clipboard.writeText(document.getElementById(button.dataset.copy).textContent),
  );
