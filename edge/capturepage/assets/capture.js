"use strict";
(() => {
  // src/page.ts
  var mount = document.getElementById("idstream");
  if (mount) {
    const d = mount.dataset;
    history.replaceState(null, "", window.location.pathname);
    IdStream.start({
      container: mount,
      sessionId: d.sessionId ?? "",
      sdkToken: d.token ?? "",
      nonce: d.nonce || void 0,
      locale: d.locale || void 0,
      steps: (d.steps ?? "").split(" ").filter(Boolean),
      onComplete: (e) => {
        document.documentElement.dataset.complete = e.status;
      }
    });
    delete d.token;
  }
})();
