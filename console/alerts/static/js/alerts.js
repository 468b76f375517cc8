// The Alerts page: when the firing count in the navigation changes (alerts_badge.js), the
// page's tables are out of date; reload them, unless the user is typing in a form.
(function () {
  var first = true;
  document.addEventListener("alerts:changed", function () {
    if (first) { first = false; return; }         // the first push repeats what the page shows
    var active = document.activeElement;
    if (active && (active.tagName === "INPUT" || active.tagName === "SELECT")) return;
    window.location.reload();
  });
})();
