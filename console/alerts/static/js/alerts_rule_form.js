// The rule form: show the fields the chosen kind uses (target for group and topic rules,
// statuses for Burrow status rules, threshold for the others). The server checks them all.
(function () {
  var form = document.getElementById("rule-form");
  if (!form) return;
  var kind = form.querySelector("[name=kind]");
  var groupOrTopic = ["group_lag", "group_time_lag", "group_status", "catch_up", "under_replicated", "offline",
                      "hanging_transaction"];
  // A field's paragraph; a checkbox group renders as a <div> the parser puts after its <p>.
  function parts(name) {
    var group = document.getElementById("id_" + name);
    if (group && group.tagName === "DIV") return [group, group.previousElementSibling];
    var input = form.querySelector("[name=" + name + "]");
    return input && input.closest("p") ? [input.closest("p")] : [];
  }
  function update() {
    var k = kind.value;
    var show = {
      target_type: groupOrTopic.indexOf(k) >= 0,
      target: groupOrTopic.indexOf(k) >= 0,
      statuses: k === "group_status",
      threshold: k !== "group_status" && k !== "broker_down"
    };
    Object.keys(show).forEach(function (name) {
      parts(name).forEach(function (element) { if (element) element.hidden = !show[name]; });
    });
  }
  kind.addEventListener("change", update);
  update();
})();
