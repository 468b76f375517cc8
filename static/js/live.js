// Live fragments (console/live.py): every element with data-live-fragment="<websocket path>"
// gets its content replaced by each HTML push of the server. The socket reconnects with
// exponential backoff (1 s doubling to 30 s) after a drop. data-live says connected or
// reconnecting; data-connects counts the connections made (a healthy page stays at 1).
(function () {
  if (!window.WebSocket) return;
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  document.querySelectorAll("[data-live-fragment]").forEach(function (element) {
    var url = scheme + window.location.host + element.dataset.liveFragment;
    var delay = 1000;
    var connects = 0;
    function connect() {
      var socket = new WebSocket(url);
      socket.onopen = function () {
        delay = 1000;
        connects += 1;
        element.dataset.connects = String(connects);
        element.dataset.live = "connected";
      };
      socket.onmessage = function (event) {
        element.innerHTML = event.data;
        element.dispatchEvent(new CustomEvent("live:updated", {bubbles: true}));
      };
      socket.onclose = function () {
        element.dataset.live = "reconnecting";
        setTimeout(connect, delay);
        delay = Math.min(delay * 2, 30000);
      };
    }
    connect();
  });
})();
