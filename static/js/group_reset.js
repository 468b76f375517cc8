// Reset form: show only the fields the chosen target and scope use (the server checks them all).
(function () {
  var needs = {target: {datetime: ["datetime"], offset: ["offset"], shift: ["shift"]},
               scope: {topic: ["topic"], partitions: ["topic", "partitions"]}};
  var optional = ["datetime", "offset", "shift", "topic", "partitions"];
  document.querySelectorAll("form.reset-offsets").forEach(function (form) {
    var target = form.querySelector("select[name=target]");
    var scope = form.querySelector("select[name=scope]");
    if (!target || !scope) return;
    function sync() {
      var shown = (needs.target[target.value] || []).concat(needs.scope[scope.value] || []);
      optional.forEach(function (name) {
        var input = form.querySelector("[name=" + name + "]");
        var row = input && input.closest("p");
        if (row) row.hidden = shown.indexOf(name) < 0 && !row.querySelector(".errorlist");
      });
    }
    target.addEventListener("change", sync);
    scope.addEventListener("change", sync);
    sync();
  });
})();
