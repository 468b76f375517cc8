// Group page: after each live push (static/js/live.js fires "live:updated") draw the lag
// chart of the new fragment with the figure it carries.
(function () {
  var live = document.getElementById("group-live");
  if (!live) return;
  live.addEventListener("live:updated", function () {
    if (!window.Plotly) return;
    live.querySelectorAll("[data-chart]").forEach(function (element) {
      var source = document.getElementById(element.dataset.chart);
      if (!source) return;
      var figure = JSON.parse(source.textContent);
      window.Plotly.react(element, figure.data, figure.layout, {displaylogo: false, responsive: true})
        .then(function () { element.dataset.drawn = "true"; });
    });
  });
})();
