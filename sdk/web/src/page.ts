// The hosted capture page's script (GET /v1/capture/{session_id}): reads the session from
// the mount element's data attributes (the edge wrote them after checking the link's
// token), removes the token from the address bar and history, and starts the SDK, which
// the page loads before it as idstream.umd.js (the global IdStream). Both come from the
// page's own origin.

import type { start as startFn } from "./index";

declare const IdStream: { start: typeof startFn };

const mount = document.getElementById("idstream");
if (mount) {
  const d = mount.dataset;
  history.replaceState(null, "", window.location.pathname);
  IdStream.start({
    container: mount,
    sessionId: d.sessionId ?? "",
    sdkToken: d.token ?? "",
    nonce: d.nonce || undefined,
    locale: d.locale || undefined,
    steps: (d.steps ?? "").split(" ").filter(Boolean),
    onComplete: (e) => {
      document.documentElement.dataset.complete = e.status;
    },
  });
  delete d.token;
}
