// Pages whose figures come from a background snapshot (console.kafka_gateway.cache) mark the
// part that depends on it with data-snapshot-region (and an id). While the server says the
// snapshot is being collected or renewed (an element with data-renewing), this fetches the
// page again every second, up to a minute, and swaps each region for its new version until
// the page no longer says so: the old figures never stay on screen as if they were current.
(function () {
  if (!document.querySelector("[data-renewing]") || !window.fetch || !window.DOMParser) return;
  var tries = 0;
  function swap(fresh) {
    document.querySelectorAll("[data-snapshot-region][id]").forEach(function (region) {
      var next = fresh.getElementById(region.id);
      if (!next) return;
      region.replaceWith(next);
      next.dispatchEvent(new CustomEvent("live:updated", {bubbles: true}));
      if (window.consoleCharts) next.querySelectorAll("[data-chart]").forEach(window.consoleCharts.draw);
    });
  }
  function poll() {
    tries += 1;
    fetch(window.location.href, {credentials: "same-origin", headers: {"Accept": "text/html"}})
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        swap(fresh);
        if (fresh.querySelector("[data-renewing]") && tries < 60) setTimeout(poll, 1000);
      })
      .catch(function () { if (tries < 60) setTimeout(poll, 2000); });
  }
  setTimeout(poll, 1000);
})();
