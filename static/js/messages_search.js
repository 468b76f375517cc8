// Search page: the search runs on the server; matches and scan stats stream in over the
// websocket, merged into one timeline by timestamp across partitions, with the matched text
// highlighted. The form's state lives in the address (shared, reloaded: the search runs again).
// Stop ends a search; one stopped by a limit or by Stop can continue from where it was.
(function () {
  var form = document.getElementById("search-form");
  if (!form) return;
  var rows = window.MessagesRows, units = window.consoleUnits;
  var tbody = document.querySelector("#search-results tbody");
  var stop = document.getElementById("search-stop");
  var again = document.getElementById("search-continue");
  var errorBox = document.getElementById("search-error");
  var notes = document.getElementById("search-notes");
  var exportLink = document.getElementById("search-export");
  var positionsInput = form.querySelector("input[name=positions]");
  var state = document.getElementById("stat-state");
  var socket = null, lastStats = null, queued = null, pattern = null, detailQuery = "";
  var URL_SKIP = ["positions", "csrfmiddlewaretoken"];

  function set(id, text) { document.getElementById(id).textContent = text; }
  function showStats(stats) {
    lastStats = stats;
    set("stat-records", units.count(stats.records_scanned));
    set("stat-bytes", units.size(stats.bytes_scanned));
    set("stat-matches", units.count(stats.matches));
    set("stat-elapsed", units.durationSeconds(stats.elapsed_seconds));
    set("stat-rate", units.rate(stats.records_per_second, "record"));   // "15,876 records/s"
    set("stat-positions", "Position per partition: " + Object.keys(stats.positions).map(function (p) {
      return p + ": " + units.count(stats.positions[p]) + " / " + units.count(stats.ends[p]);
    }).join(", "));
    document.getElementById("stat-records").dataset.value = String(stats.records_scanned);
    document.getElementById("stat-matches").dataset.value = String(stats.matches);
  }
  function escapeRegExp(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }
  // What to mark in the rows: the substring, or the regular expression when the browser's
  // engine reads it as RE2 does (most patterns); else nothing is marked.
  function highlightPattern() {
    var text = form.elements.text.value;
    if (!text) return null;
    try {
      return new RegExp(form.elements.mode.value === "regex" ? text : escapeRegExp(text), "g");
    } catch (e) { return null; }
  }
  function addMatches(messages) {
    var selector = {value: ".msg-value .text", key: ".msg-key .text", header: ".msg-headers"}[form.elements.field.value];
    messages.forEach(function (m) {
      var row = rows.build(m, form.dataset.detail, detailQuery);
      if (pattern) rows.highlight(row, pattern, selector);
      rows.insertSorted(tbody, row, false);
    });
  }
  function connect() {
    socket = new WebSocket(rows.socketUrl(form.dataset.ws));
    socket.addEventListener("open", function () {
      if (queued) { socket.send(JSON.stringify(queued)); queued = null; }
    });
    socket.addEventListener("message", function (event) {
      var data = JSON.parse(event.data);
      if (data.type === "matches") {
        addMatches(data.messages);
      } else if (data.type === "stats") {
        showStats(data.stats);
      } else if (data.type === "notes") {
        data.notes.forEach(function (n) { var li = document.createElement("li"); li.textContent = n; notes.appendChild(li); });
      } else if (data.type === "done") {
        showStats(data.stats);
        stop.disabled = true;
        state.textContent = data.stats.done ? "finished" : "stopped (" + data.stats.stopped_by + ")";
        again.hidden = data.stats.done;
      } else if (data.type === "error") {
        errorBox.hidden = false;
        errorBox.textContent = data.message;
        stop.disabled = true;
        state.textContent = "failed";
      }
    });
    socket.addEventListener("close", function () { socket = null; });
  }
  function send(command) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(command));
    else { queued = command; if (!socket) connect(); }
  }
  function formParams() {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, name) {
      if (URL_SKIP.indexOf(name) < 0 && value !== "") params.set(name, value);
    });
    return params;
  }
  function start(continuing) {
    errorBox.hidden = true;
    if (!continuing) { tbody.textContent = ""; notes.textContent = ""; positionsInput.value = ""; }
    pattern = highlightPattern();
    detailQuery = rows.formatQuery(form);
    history.replaceState(null, "", location.pathname + "?" + formParams().toString());
    state.textContent = "searching";
    stop.disabled = false;
    again.hidden = true;
    send(rows.formCommand(form, "search"));
  }
  form.addEventListener("submit", function (event) { event.preventDefault(); start(false); });
  stop.addEventListener("click", function () { send({action: "stop"}); });
  again.addEventListener("click", function () {
    if (!lastStats) return;
    positionsInput.value = Object.keys(lastStats.positions).map(function (p) {
      return p + ":" + lastStats.positions[p];
    }).join(",");
    start(true);
  });
  exportLink.addEventListener("click", function () {
    var params = formParams();
    params.set("format", "jsonl");
    exportLink.href = form.dataset.export + "?" + params.toString();
  });
  // A shared or reloaded address: fill the form from it and search at once.
  var fromUrl = new URLSearchParams(location.search);
  var filled = false;
  fromUrl.forEach(function (value, name) {
    var field = form.elements[name];
    if (field && URL_SKIP.indexOf(name) < 0) { field.value = value; filled = true; }
  });
  connect();
  if (filled) start(false);
})();
