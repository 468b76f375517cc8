// Live fragments marked data-live-charts (the analytics pages): after each push
// (static/js/live.js fires "live:updated") draw the charts of the new HTML with charts.js.
(function () {
  document.querySelectorAll("[data-live-charts]").forEach(function (live) {
    live.addEventListener("live:updated", function () {
      if (!window.consoleCharts) return;
      live.querySelectorAll("[data-chart]").forEach(window.consoleCharts.draw);
    });
  });
})();
