// The Alerts page: when the counts of firing alerts in the navigation change (alerts_badge.js),
// the page's tables are out of date; reload them, unless the user is typing in a form. The
// silenced ones count too: one resolving or its silence ending changes the page, not the badge.
(function () {
  function firing() {
    var badge = document.querySelector("[data-alerts-badge] [data-firing]");
    return badge ? badge.dataset.firing + "/" + badge.dataset.silenced : null;
  }
  var shown = firing();
  document.addEventListener("alerts:changed", function () {
    var now = firing();
    if (now === shown) return;           // a reconnection's push, or a change the count does not show
    shown = now;
    var active = document.activeElement;
    if (active && (active.tagName === "INPUT" || active.tagName === "SELECT")) return;
    window.location.reload();
  });
})();
