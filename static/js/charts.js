// Draw every element with a data-chart attribute: its value names the json_script element
// that holds the figure ({"data": [...], "layout": {...}}), built on the server with plotly
// (console/charts.py). Colours follow the page's theme (CSS variables), also when the theme
// switches later: only the colours are changed then, so every axis keeps fitting its data.
(function () {
  if (!window.Plotly) return;
  function colors() {
    var style = getComputedStyle(document.documentElement);
    var color = function (name) { return style.getPropertyValue(name).trim(); };
    return {fg: color("--fg"), line: color("--line"), panel: color("--panel")};
  }
  function themed(layout) {
    var c = colors();
    var axis = function (given) {
      var result = Object.assign({}, given || {}, {gridcolor: c.line, zerolinecolor: c.line, linecolor: c.line});
      if (!result.range) result.autorange = true;          // fit the data: never a range left from earlier
      return result;
    };
    return Object.assign({}, layout, {
      paper_bgcolor: c.panel, plot_bgcolor: c.panel,
      font: Object.assign({}, layout.font || {}, {color: c.fg}),
      xaxis: axis(layout.xaxis), yaxis: axis(layout.yaxis)
    });
  }
  function recolor(element) {
    var c = colors();
    return window.Plotly.relayout(element, {
      paper_bgcolor: c.panel, plot_bgcolor: c.panel, "font.color": c.fg,
      "xaxis.gridcolor": c.line, "xaxis.zerolinecolor": c.line, "xaxis.linecolor": c.line,
      "yaxis.gridcolor": c.line, "yaxis.zerolinecolor": c.line, "yaxis.linecolor": c.line
    });
  }
  function draw(element) {
    var source = document.getElementById(element.dataset.chart);
    if (!source) return;
    var figure = JSON.parse(source.textContent);
    window.Plotly.newPlot(element, figure.data, themed(figure.layout), {displaylogo: false, responsive: true})
      .then(function () {
        element.dataset.drawn = "true";
        element.dataset.drawnAt = Math.round(performance.now());    // ms since the page's navigation began
        element.dataset.theme = document.documentElement.dataset.theme;
      });
  }
  document.querySelectorAll("[data-chart]").forEach(draw);
  // Pages whose live fragments carry charts (static/js/live_charts.js) draw the new ones with this.
  window.consoleCharts = {draw: draw};
  document.addEventListener("console:themechange", function () {
    document.querySelectorAll("[data-chart][data-drawn]").forEach(function (element) {
      recolor(element).then(function () { element.dataset.theme = document.documentElement.dataset.theme; });
    });
  });
})();
