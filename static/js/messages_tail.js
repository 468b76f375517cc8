// Live tail: new records over the websocket, newest on top. The server caps what it sends per
// second and reports the rate and what it did not send; the page keeps at most MAX_ROWS rows.
// In read_uncommitted a transaction's rows come "pending" and an outcome event updates their badge.
(function () {
  var form = document.getElementById("tail-form");
  if (!form) return;
  var MAX_ROWS = 500;
  var rows = window.MessagesRows;
  var tbody = document.querySelector("#tail-results tbody");
  var pause = document.getElementById("tail-pause");
  var errorBox = document.getElementById("tail-error");
  var paused = false, socket = null;
  function set(id, text) { document.getElementById(id).textContent = text; }

  function connect(onOpen) {
    socket = new WebSocket(rows.socketUrl(form.dataset.ws));
    socket.addEventListener("open", function () { set("tail-state", "connected"); if (onOpen) onOpen(); });
    socket.addEventListener("message", function (event) {
      var data = JSON.parse(event.data);
      if (data.type === "record") {
        tbody.insertBefore(rows.build(data.message, form.dataset.detail), tbody.firstChild);
        while (tbody.rows.length > MAX_ROWS) tbody.deleteRow(-1);
      } else if (data.type === "outcome") {
        data.offsets.forEach(function (offset) {
          var row = tbody.querySelector('tr[data-partition="' + Number(data.partition) + '"][data-offset="' + Number(offset) + '"]:not([data-control])');
          if (row) rows.setOutcome(row, data.transaction);
        });
      } else if (data.type === "tailing") {
        set("tail-state", "tailing");
        form.dataset.tailing = "true";
      } else if (data.type === "tail_stats") {
        set("tail-rate", String(data.stats.records_per_second));
        set("tail-matches", String(data.stats.matches));
        set("tail-shown", String(data.stats.shown));
        set("tail-not-shown", String(data.stats.not_shown));
      } else if (data.type === "error") {
        errorBox.hidden = false;
        errorBox.textContent = data.message;
      }
    });
    socket.addEventListener("close", function () { set("tail-state", "disconnected"); form.dataset.tailing = "false"; });
  }
  function startTail() {
    errorBox.hidden = true;
    tbody.textContent = "";
    paused = false;
    pause.textContent = "Pause";
    pause.disabled = false;
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
  });
  connect(startTail);   // tail at once, with the empty filter
})();
