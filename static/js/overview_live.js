// Live overview: the server pushes a fresh render of the overview partial whenever it changes.
// The socket reconnects with exponential backoff (1 s doubling to 30 s) after a drop.
(function () {
  var live = document.getElementById("overview-live");
  if (!live || !window.WebSocket) return;
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  var url = scheme + window.location.host + "/ws/clusters/" + live.dataset.cluster + "/overview/";
  var delay = 1000;

  function connect() {
    var socket = new WebSocket(url);
    socket.onopen = function () { delay = 1000; live.dataset.live = "connected"; };
    socket.onmessage = function (event) { live.innerHTML = event.data; };
    socket.onclose = function () {
      live.dataset.live = "reconnecting";
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
