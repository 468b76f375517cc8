// Draw every element with a data-chart attribute: its value names the json_script element
// that holds the figure ({"data": [...], "layout": {...}}), built on the server with plotly.
// Colours follow the page's theme (CSS variables), also when the theme switches later.
(function () {
  if (!window.Plotly) return;
  function themed(layout) {
    var style = getComputedStyle(document.documentElement);
    var color = function (name) { return style.getPropertyValue(name).trim(); };
    var axis = {gridcolor: color("--line"), zerolinecolor: color("--line"), linecolor: color("--line")};
    return Object.assign({}, layout, {
      paper_bgcolor: color("--panel"), plot_bgcolor: color("--panel"),
      font: Object.assign({}, layout.font || {}, {color: color("--fg")}),
      xaxis: Object.assign({}, layout.xaxis || {}, axis), yaxis: Object.assign({}, layout.yaxis || {}, axis)
    });
  }
  var drawn = [];
  function draw(element) {
    var source = document.getElementById(element.dataset.chart);
    if (!source) return;
    var figure = JSON.parse(source.textContent);
    drawn = drawn.filter(function (chart) { return chart.element.isConnected && chart.element !== element; });
    drawn.push({element: element, layout: figure.layout});
    window.Plotly.newPlot(element, figure.data, themed(figure.layout), {displaylogo: false, responsive: true})
      .then(function () {
        element.dataset.drawn = "true";
        element.dataset.theme = document.documentElement.dataset.theme;
      });
  }
  document.querySelectorAll("[data-chart]").forEach(draw);
  // Pages whose live fragments carry charts (static/js/live_charts.js) draw the new ones with this.
  window.consoleCharts = {draw: draw};
  document.addEventListener("console:themechange", function () {
    drawn.forEach(function (chart) {
      if (!chart.element.dataset.drawn) return;
      window.Plotly.relayout(chart.element, themed(chart.layout)).then(function () {
        chart.element.dataset.theme = document.documentElement.dataset.theme;
      });
    });
  });
})();
