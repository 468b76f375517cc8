// Live tail: new records over the websocket, newest on top. The server caps what it sends per
// second and reports the rate and what it did not send; the page keeps at most MAX_ROWS rows.
// The rate is a measurement or says why there is none: "waiting…" until the running tail's first
// report (every half second), "—" while paused or disconnected.
// In read_uncommitted a transaction's rows come "pending" and an outcome event updates their badge.
// "Start tail" while a tail runs restarts it with the form's filter where the old one stopped
// (the server continues from there): the rows stay, a line marks the restart, and no record
// produced meanwhile is missed or shown twice.
(function () {
  var form = document.getElementById("tail-form");
  if (!form) return;
  var MAX_ROWS = 500;
  var rows = window.MessagesRows, units = window.consoleUnits;
  var tbody = document.querySelector("#tail-results tbody");
  var pause = document.getElementById("tail-pause");
  var errorBox = document.getElementById("tail-error");
  var paused = false, socket = null, detailQuery = "";
  function set(id, text, value) {
    var node = document.getElementById(id);
    node.textContent = text;
    if (value !== undefined) node.dataset.value = String(value);
  }
  // No measurement of the running tail: the rate says so instead of a number.
  function rateUnknown(text) {
    var node = document.getElementById("tail-rate");
    node.textContent = text;
    node.classList.add("muted");
    delete node.dataset.value;
  }
  function shownAlready(message) {
    return tbody.querySelector('tr[data-partition="' + Number(message.partition) + '"][data-offset="' +
                               Number(message.offset) + '"]') !== null;
  }
  function restartLine(continued) {
    var row = document.createElement("tr");
    row.className = "tail-restart";
    var td = document.createElement("td");
    td.colSpan = 7;
    td.textContent = (continued ? "Tail restarted with the new filter at " : "Tail started at ") +
      units.timestamp(new Date()) + (continued ? ", from where the previous one stopped." : ".");
    row.appendChild(td);
    tbody.insertBefore(row, tbody.firstChild);
  }

  function connect(onOpen) {
    socket = new WebSocket(rows.socketUrl(form.dataset.ws));
    socket.addEventListener("open", function () { set("tail-state", "connected"); if (onOpen) onOpen(); });
    socket.addEventListener("message", function (event) {
      var data = JSON.parse(event.data);
      if (data.type === "record") {
        if (shownAlready(data.message)) return;
        tbody.insertBefore(rows.build(data.message, form.dataset.detail, detailQuery), tbody.firstChild);
        while (tbody.rows.length > MAX_ROWS) tbody.deleteRow(-1);
      } else if (data.type === "outcome") {
        data.offsets.forEach(function (offset) {
          var row = tbody.querySelector('tr[data-partition="' + Number(data.partition) + '"][data-offset="' + Number(offset) + '"]:not([data-control])');
          if (row) rows.setOutcome(row, data.transaction);
        });
      } else if (data.type === "tailing") {
        set("tail-state", "tailing");
        rateUnknown("waiting\u2026");
        restartLine(data.continued);
        form.dataset.tailing = "true";
      } else if (data.type === "tail_stats") {
        if (!paused) {   // a report already on its way when Pause was pressed measures nothing now
          set("tail-rate", units.rate(data.stats.records_per_second, "record"), data.stats.records_per_second);
          document.getElementById("tail-rate").classList.remove("muted");
        }
        set("tail-matches", units.count(data.stats.matches), data.stats.matches);
        set("tail-shown", units.count(data.stats.shown), data.stats.shown);
        set("tail-not-shown", units.count(data.stats.not_shown), data.stats.not_shown);
      } else if (data.type === "error") {
        errorBox.hidden = false;
        errorBox.textContent = data.message;
      }
    });
    socket.addEventListener("close", function () {
      set("tail-state", "disconnected");
      rateUnknown("\u2014");
      form.dataset.tailing = "false";
    });
  }
  function startTail() {
    errorBox.hidden = true;
    paused = false;
    pause.textContent = "Pause";
    pause.disabled = false;
    form.dataset.tailing = "false";
    detailQuery = rows.formatQuery(form);
    socket.send(JSON.stringify(rows.formCommand(form, "tail")));
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (socket && socket.readyState === WebSocket.OPEN) startTail(); else connect(startTail);
  });
  pause.addEventListener("click", function () {
    paused = !paused;
    socket.send(JSON.stringify({action: paused ? "pause" : "resume"}));
    pause.textContent = paused ? "Resume" : "Pause";
    set("tail-state", paused ? "paused" : "tailing");
    rateUnknown(paused ? "\u2014" : "waiting\u2026");
  });
  connect(startTail);   // tail at once, with the empty filter
})();
