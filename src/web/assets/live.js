// Keeps the first page of "My agents" current: polls the two newest ids (the activity log's and the
// event log's) twice a second and, when either moved, reads the page again and swaps in its logs.
const watched = document.querySelector('[data-live]');
if (watched) {
  const status = document.getElementById('live-status');
  let activity = watched.dataset.liveActivity;
  let events = watched.dataset.liveEvents;
  let busy = false;
  const refresh = async () => {
    const fresh = new DOMParser().parseFromString(await (await fetch(location.href)).text(), 'text/html');
    for (const region of document.querySelectorAll('[data-live-region]')) {
      const replacement = fresh.getElementById(region.id);
      if (replacement) region.replaceWith(replacement);
    }
  };
  const poll = async () => {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const answer = await fetch(watched.dataset.live, { headers: { accept: 'application/json' } });
      if (!answer.ok) return;
      const heads = await answer.json();
      if (heads.activity !== activity || heads.events !== events) {
        activity = heads.activity;
        events = heads.events;
        await refresh();
        if (status) status.textContent = `Updated ${new Date().toISOString().slice(11, 19)} UTC.`;
      }
    } catch {
      // Offline for a moment: the next tick tries again.
    } finally {
      busy = false;
    }
  };
  setInterval(poll, 500);
}
