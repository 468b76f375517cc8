// The ACL wizard: show only the fields of the kind of client chosen (the server ignores the others).
(function () {
  var FIELDS = {
    consumer: ["topic", "topic_pattern", "group", "group_pattern"],
    producer: ["topic", "topic_pattern", "transactional_id", "transactional_pattern", "idempotent"],
    streams: ["application_id", "input_topics", "output_topics", "exactly_once"]
  };
  var form = document.getElementById("wizard-form");
  if (!form) return;
  var all = [].concat(FIELDS.consumer, FIELDS.producer, FIELDS.streams);
  function show() {
    var chosen = form.querySelector("input[name=kind]:checked");
    var wanted = FIELDS[chosen ? chosen.value : "consumer"];
    all.forEach(function (name) {
      var input = form.querySelector("[name=" + name + "]");
      var row = input && input.closest("p.field");
      if (row) row.hidden = wanted.indexOf(name) < 0;
    });
  }
  form.addEventListener("change", show);
  show();
})();
