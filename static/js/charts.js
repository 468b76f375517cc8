// Draw every element with a data-chart attribute: its value names the json_script element
// that holds the figure ({"data": [...], "layout": {...}}), built on the server with plotly.
(function () {
  if (!window.Plotly) return;
  document.querySelectorAll("[data-chart]").forEach(function (element) {
    var source = document.getElementById(element.dataset.chart);
    if (!source) return;
    var figure = JSON.parse(source.textContent);
    window.Plotly.newPlot(element, figure.data, figure.layout, {displaylogo: false, responsive: true})
      .then(function () { element.dataset.drawn = "true"; });
  });
})();
