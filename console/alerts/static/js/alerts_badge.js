// The navigation's firing-alerts badge (console/alerts/live.py): its count is pushed over a
// websocket whenever it changes, on every cluster page. Reconnects with backoff (1 s doubling
// to 30 s); data-live says connected or reconnecting.
(function () {
  var element = document.querySelector("[data-alerts-badge]");
  if (!element || !window.WebSocket) return;
  var url = (window.location.protocol === "https:" ? "wss://" : "ws://") + window.location.host +
    element.dataset.alertsBadge;
  var delay = 1000;
  function connect() {
    var socket = new WebSocket(url);
    socket.onopen = function () { delay = 1000; element.dataset.live = "connected"; };
    socket.onmessage = function (event) {
      // The cluster's feed sends every fragment "unreachable since ..." when the cluster cannot
      // be asked; the count comes from the console's database and stays as it was.
      if (event.data.indexOf("data-firing") < 0) return;
      element.innerHTML = event.data;
      element.dispatchEvent(new CustomEvent("alerts:changed", {bubbles: true}));
    };
    socket.onclose = function () {
      element.dataset.live = "reconnecting";
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
