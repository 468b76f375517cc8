// Search page: the search runs on the server; matches and scan stats stream in over the
// websocket. Stop ends it; a search stopped by a limit or by Stop can continue from where it was.
(function () {
  var form = document.getElementById("search-form");
  if (!form) return;
  var rows = window.MessagesRows;
  var tbody = document.querySelector("#search-results tbody");
  var stop = document.getElementById("search-stop");
  var again = document.getElementById("search-continue");
  var errorBox = document.getElementById("search-error");
  var notes = document.getElementById("search-notes");
  var exportLink = document.getElementById("search-export");
  var positionsInput = form.querySelector("input[name=positions]");
  var state = document.getElementById("stat-state");
  var socket = null, lastStats = null, queued = null;

  function set(id, text) { document.getElementById(id).textContent = text; }
  function showStats(stats) {
    lastStats = stats;
    set("stat-records", String(stats.records_scanned));
    set("stat-bytes", String(stats.bytes_scanned));
    set("stat-matches", String(stats.matches));
    set("stat-elapsed", stats.elapsed_seconds + " s");
    set("stat-rate", String(stats.records_per_second));
    set("stat-positions", "Position per partition: " + Object.keys(stats.positions).map(function (p) {
      return p + ": " + stats.positions[p] + " / " + stats.ends[p];
    }).join(", "));
  }
  function connect() {
    socket = new WebSocket(rows.socketUrl(form.dataset.ws));
    socket.addEventListener("open", function () {
      if (queued) { socket.send(JSON.stringify(queued)); queued = null; }
    });
    socket.addEventListener("message", function (event) {
      var data = JSON.parse(event.data);
      if (data.type === "matches") {
        data.messages.forEach(function (m) { tbody.appendChild(rows.build(m, form.dataset.detail)); });
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
  function start(continuing) {
    errorBox.hidden = true;
    if (!continuing) { tbody.textContent = ""; notes.textContent = ""; positionsInput.value = ""; }
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
    var params = new URLSearchParams(new FormData(form));
    params.set("format", "jsonl");
    exportLink.href = form.dataset.export + "?" + params.toString();
  });
  connect();
})();
