// Parts of a page that the server renders again: elements with data-snapshot-region (and an
// id). window.consoleRegions.reload() fetches the page once more and swaps each such part for
// its new version (tables sort again, times localize, charts draw: "live:updated" fires).
// Pages whose figures come from a background snapshot (console.kafka_gateway.cache): while
// the server says it is being collected or renewed (an element with data-renewing), this
// reloads the regions every second, up to a minute, until the page no longer says so, so old
// figures never stay on screen as if they were current.
(function () {
  if (!window.fetch || !window.DOMParser) return;
  var loading = null;
  function swap(fresh) {
    document.querySelectorAll("[data-snapshot-region][id]").forEach(function (region) {
      var next = fresh.getElementById(region.id);
      if (!next) return;
      next = document.importNode(next, true);
      region.replaceWith(next);
      next.dispatchEvent(new CustomEvent("live:updated", {bubbles: true}));
      if (window.consoleCharts) next.querySelectorAll("[data-chart]").forEach(window.consoleCharts.draw);
    });
  }
  function reload() {
    if (loading) return loading;
    loading = fetch(window.location.href, {credentials: "same-origin", headers: {"Accept": "text/html"}})
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        swap(fresh);
        return fresh;
      })
      .finally(function () { loading = null; });
    return loading;
  }
  window.consoleRegions = {reload: reload};

  if (!document.querySelector("[data-renewing]")) return;
  var tries = 0;
  function poll() {
    tries += 1;
    reload().then(function (fresh) {
      if (fresh.querySelector("[data-renewing]") && tries < 60) setTimeout(poll, 1000);
    }, function () { if (tries < 60) setTimeout(poll, 2000); });
  }
  setTimeout(poll, 1000);
})();
