// Reassignment page: the ETA of a plan at the throttle typed in the run form, and the live
// progress of a job, pushed by the server over a websocket (it reconnects with backoff). When
// the job changes state or a move starts or ends, the page's actions and moves table are
// fetched again (static/js/regions.js): at "done", Pause and Cancel go and no move says
// "pending" any more, without a reload.
(function () {
  var units = window.consoleUnits;
  var estimate = document.getElementById("eta-estimate");
  var throttle = document.getElementById("id_throttle");
  if (estimate && throttle && estimate.dataset.busiestBytes !== undefined) {
    var busiest = Number(estimate.dataset.busiestBytes);
    var label = document.getElementById("eta-throttle");
    var update = function () {
      var rate = 0;
      try { rate = throttle.value.trim() ? units.parseSize(throttle.value.replace(/\/s$/, "")) : 0; } catch (e) { rate = NaN; }
      if (isNaN(rate)) { estimate.textContent = "—"; label.textContent = "a throttle that is not a size"; return; }
      estimate.textContent = rate > 0 ? units.durationSeconds(busiest / rate) : "as fast as the cluster copies";
      label.textContent = rate > 0 ? units.sizeRate(rate) + " per broker" : "no throttle";
    };
    throttle.addEventListener("input", update);
    update();
  }

  var bar = document.getElementById("job-progress-bar");
  var live = document.getElementById("job-live");
  function show(progress) {
    bar.style.width = progress.percent + "%";
    bar.dataset.percent = progress.percent;
    var text = {"job-percent": progress.percent, "job-moves-done": units.count(progress.moves_done),
                "job-moves-total": units.count(progress.moves_total),
                "job-moves-in-flight": units.count(progress.moves_in_flight),
                "job-bytes-done": units.size(progress.bytes_done), "job-bytes-total": units.size(progress.bytes_total),
                "job-state": progress.state, "job-message": progress.message,
                "job-eta": progress.eta_seconds === null ? "—" : units.durationSeconds(progress.eta_seconds),
                "job-eta-basis": progress.eta_basis ? "(at the " + progress.eta_basis + ")" : ""};
    Object.keys(text).forEach(function (id) {
      var element = document.getElementById(id);
      if (element) element.textContent = text[id];
    });
    document.getElementById("job-bytes-done").dataset.bytes = progress.bytes_done;
    var state = document.getElementById("job-state");
    if (state) state.className = "job-state state-" + progress.state;
    var changed = live.dataset.state !== progress.state || live.dataset.movesDone !== String(progress.moves_done) ||
      live.dataset.movesInFlight !== String(progress.moves_in_flight);
    live.dataset.state = progress.state;
    live.dataset.movesDone = progress.moves_done;
    live.dataset.movesInFlight = progress.moves_in_flight;
    if (changed && window.consoleRegions) window.consoleRegions.reload();
  }
  if (bar) bar.style.width = bar.dataset.percent + "%";

  if (!live || !window.WebSocket) return;
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  var url = scheme + window.location.host + "/ws/reassignments/" + live.dataset.job + "/";
  var delay = 1000;
  function connect() {
    var socket = new WebSocket(url);
    socket.onopen = function () { delay = 1000; live.dataset.live = "connected"; };
    socket.onmessage = function (event) { show(JSON.parse(event.data)); };
    socket.onclose = function () {
      live.dataset.live = "reconnecting";
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
