// Reassignment page: the ETA of a plan at the throttle typed in the run form, and the live
// progress of a job, pushed by the server over a websocket (it reconnects with backoff).
(function () {
  function duration(seconds) {
    if (!isFinite(seconds)) return "—";
    if (seconds < 90) return Math.round(seconds) + " s";
    if (seconds < 5400) return Math.round(seconds / 60) + " min";
    return (seconds / 3600).toFixed(1) + " h";
  }

  var estimate = document.getElementById("eta-estimate");
  var throttle = document.getElementById("id_throttle_mb_per_sec");
  if (estimate && throttle) {
    var busiest = Number(estimate.dataset.busiestBytes);
    var label = document.getElementById("eta-throttle");
    var update = function () {
      var rate = Number(throttle.value) * 1024 * 1024;
      estimate.textContent = rate > 0 ? duration(busiest / rate) : "—";
      label.textContent = rate > 0 ? throttle.value + " MB/s per broker" : "no throttle";
    };
    throttle.addEventListener("input", update);
    update();
  }

  var bar = document.getElementById("job-progress-bar");
  function show(progress) {
    bar.style.width = progress.percent + "%";
    bar.dataset.percent = progress.percent;
    var text = {"job-percent": progress.percent, "job-moves-done": progress.moves_done,
                "job-moves-total": progress.moves_total, "job-moves-in-flight": progress.moves_in_flight,
                "job-state": progress.state, "job-message": progress.message,
                "job-eta": progress.eta_seconds === null ? "—" : duration(progress.eta_seconds)};
    Object.keys(text).forEach(function (id) {
      var element = document.getElementById(id);
      if (element) element.textContent = text[id];
    });
    var state = document.getElementById("job-state");
    if (state) state.className = "job-state state-" + progress.state;
  }
  if (bar) bar.style.width = bar.dataset.percent + "%";

  var live = document.getElementById("job-live");
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
