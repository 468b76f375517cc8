// Reset form: show only the fields the chosen target and scope use (the server checks them all),
// and send the browser's UTC offset for the date-time picker's value (a datetime-local input has
// no zone; the server reads it as UTC without this).
(function () {
  var needs = {target: {datetime: ["datetime"], offset: ["offset"], shift: ["shift"]},
               scope: {topic: ["topic"], partitions: ["topic", "partitions"]}};
  var optional = ["datetime", "offset", "shift", "topic", "partitions"];
  function zoneOf(value) {
    var moment = new Date(value);                   // a datetime-local value is read as local time
    if (isNaN(moment.getTime())) return "";
    var minutes = -moment.getTimezoneOffset(), sign = minutes < 0 ? "-" : "+";
    minutes = Math.abs(minutes);
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    return sign + pad(Math.floor(minutes / 60)) + ":" + pad(minutes % 60);
  }
  document.querySelectorAll("form.reset-offsets").forEach(function (form) {
    var target = form.querySelector("select[name=target]");
    var scope = form.querySelector("select[name=scope]");
    if (!target || !scope) return;
    function sync() {
      var shown = (needs.target[target.value] || []).concat(needs.scope[scope.value] || []);
      optional.forEach(function (name) {
        var input = form.querySelector("[name=" + name + "]");
        var row = input && input.closest("p");
        if (!row) return;
        // Django writes a field's errors just before its row: a field with an error stays in view.
        var errors = row.previousElementSibling;
        var failed = errors && errors.classList.contains("errorlist");
        row.hidden = shown.indexOf(name) < 0 && !failed;
      });
    }
    target.addEventListener("change", sync);
    scope.addEventListener("change", sync);
    sync();
    var picker = form.querySelector("input[name=datetime]");
    var zone = form.querySelector("input[name=zone]");
    if (picker && zone) {
      var setZone = function () { zone.value = picker.value ? zoneOf(picker.value) : ""; };
      picker.addEventListener("change", setZone);
      form.addEventListener("submit", setZone);
      setZone();
    }
  });
})();
