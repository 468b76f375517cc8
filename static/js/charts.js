// Draw every element with a data-chart attribute: its value names the json_script element
// that holds the figure ({"data": [...], "layout": {...}}), built on the server with plotly
// (console/charts.py). Colours follow the page's theme (CSS variables), also when the theme
// switches later: only the colours are changed then, so every axis keeps fitting its data.
// The layout also fits the chart's width (`fitted`): where the title and the legend would share
// the top line (a phone, a long title, many series), the legend goes under the plot; a title or
// a note longer than the chart is wide wraps, and the title pushes the plot down to make room.
// Crossing that point when the window is resized draws the chart again.
(function () {
  if (!window.Plotly) return;
  var TITLE_CHAR_PX = 7.5, NOTE_CHAR_PX = 7, LEGEND_CHAR_PX = 6.5, LEGEND_ITEM_PX = 46, LINE_PX = 16;
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
  // Words into lines of at most `chars` characters, joined by plotly's <br>.
  function wrap(text, chars) {
    if (!text || text.length <= chars || text.indexOf("<br>") >= 0) return text;
    var lines = [], line = "";
    text.split(" ").forEach(function (word) {
      if (line && (line + " " + word).length > chars) { lines.push(line); line = word; }
      else line = line ? line + " " + word : word;
    });
    if (line) lines.push(line);
    return lines.join("<br>");
  }
  function lineCount(text) { return (text || "").split("<br>").length; }
  function legendNames(data) {
    var shown = (data || []).filter(function (trace) { return trace.showlegend !== false; });
    return shown.length > 1 ? shown.map(function (trace) { return trace.name || ""; }) : [];
  }
  // What `fitted` decides for a width: the title's and notes' lines, and where the legend goes.
  // Equal decisions for two widths draw the same layout (a resize between them redraws nothing).
  function decisions(figure, width) {
    var layout = figure.layout, title = (layout.title || {}).text || "";
    var names = legendNames(figure.data);
    var legendPx = names.reduce(function (sum, name) { return sum + name.length * LEGEND_CHAR_PX + LEGEND_ITEM_PX; }, 0);
    var noteChars = Math.max(16, Math.floor((width - 40) / NOTE_CHAR_PX));
    return {
      title: wrap(title, Math.max(16, Math.floor((width - 24) / TITLE_CHAR_PX))),
      legendBelow: names.length > 0 && layout.showlegend !== false && title.length * TITLE_CHAR_PX + legendPx + 32 > width,
      notes: (layout.annotations || []).map(function (note) { return wrap(note.text, noteChars); })
    };
  }
  function wrapped(fit) {
    return fit.title.indexOf("<br>") >= 0 || fit.notes.some(function (text) { return text.indexOf("<br>") >= 0; });
  }
  function fitted(figure, fit) {
    var layout = figure.layout, result = Object.assign({}, layout);
    var notes = (layout.annotations || []).map(function (note, i) { return Object.assign({}, note, {text: fit.notes[i]}); });
    if (layout.annotations) result.annotations = notes;
    // A note over the plot's top edge ("one snapshot so far") sits between the title and the plot.
    var topNotes = notes.filter(function (note) { return note.yref === "paper" && note.y >= 1 && note.yanchor === "bottom"; });
    var below = topNotes.reduce(function (lines, note) { return Math.max(lines, lineCount(note.text)); }, 0);
    if (lineCount(fit.title) > 1 || fit.legendBelow || below > 1) {
      result.title = Object.assign({}, layout.title, {text: fit.title, automargin: true, yref: "paper", y: 1,
                                                        yanchor: "bottom", pad: {b: 8 + below * LINE_PX}});
    }
    if (fit.legendBelow) {
      // Under the whole figure (the container's bottom): the plot shrinks to make room for it.
      result.legend = Object.assign({}, layout.legend, {orientation: "h", x: 0, xanchor: "left", y: 0,
                                                         yanchor: "bottom", yref: "container"});
      result.height = (layout.height || 260) + 2 * LINE_PX;
    }
    return result;
  }
  function recolor(element) {
    var c = colors();
    return window.Plotly.relayout(element, {
      paper_bgcolor: c.panel, plot_bgcolor: c.panel, "font.color": c.fg,
      "xaxis.gridcolor": c.line, "xaxis.zerolinecolor": c.line, "xaxis.linecolor": c.line,
      "yaxis.gridcolor": c.line, "yaxis.zerolinecolor": c.line, "yaxis.linecolor": c.line
    });
  }
  var figures = new WeakMap();     // element -> its figure as the server built it
  function widthOf(element) { return element.clientWidth || window.innerWidth; }
  function plot(element, figure, draw) {
    var fit = decisions(figure, widthOf(element));
    element.dataset.fit = JSON.stringify(fit);
    element.dataset.legend = fit.legendBelow ? "below" : "top";      // for tests and people reading the DOM
    element.dataset.wrapped = String(wrapped(fit));
    // A chart with no data (console/charts.py empty_figure) is only its title and a sentence:
    // its box gives up the height kept for a chart before drawing.
    element.toggleAttribute("data-empty", !(figure.data || []).length);
    return draw(element, figure.data, themed(fitted(figure, fit)), {displaylogo: false, responsive: true});
  }
  function draw(element) {
    var source = document.getElementById(element.dataset.chart);
    if (!source) return;
    var figure = JSON.parse(source.textContent);
    figures.set(element, figure);
    plot(element, figure, window.Plotly.newPlot)
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
  // A resize that changes the decisions draws the chart anew: Plotly.react would keep the
  // margins the old title and legend pushed, and cut a title wrapped onto two lines.
  var resizing = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () {
      document.querySelectorAll("[data-chart][data-drawn]").forEach(function (element) {
        var figure = figures.get(element);
        if (figure && JSON.stringify(decisions(figure, widthOf(element))) !== element.dataset.fit) {
          plot(element, figure, window.Plotly.newPlot);
        }
      });
    }, 100);
  });
})();
