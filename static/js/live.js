// Live fragments (console/live.py): every element with data-live-fragment="<websocket path>"
// gets its content replaced by each HTML push of the server. The socket reconnects with
// exponential backoff (1 s doubling to 30 s) after a drop. data-live says connected or
// reconnecting; data-connects counts the connections made (a healthy page stays at 1).
(function () {
  if (!window.WebSocket) return;
  // A fragment is rendered once for every socket, without a request, so its POST forms carry
  // no CSRF token: they get the one of the page (the log-out form's), which Django checks.
  function withCsrfToken(element) {
    var token = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (!token) return;
    element.querySelectorAll("form[method=post]").forEach(function (form) {
      if (form.querySelector("input[name=csrfmiddlewaretoken]")) return;
      var field = document.createElement("input");
      field.type = "hidden";
      field.name = "csrfmiddlewaretoken";
      field.value = token.value;
      form.prepend(field);
    });
  }
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
        withCsrfToken(element);
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
