// Rows of the messages tables, built from JSON with textContent only: a record's key, value
// or headers can never become markup or script, whatever they hold.
(function () {
  function cell(row, text, className) {
    var td = document.createElement("td");
    if (className) td.className = className;
    td.textContent = text;
    row.appendChild(td);
    return td;
  }
  function shown(decoded) {
    if (decoded.text === null) return "null";
    return decoded.error ? decoded.text + " (" + decoded.error + ")" : decoded.text;
  }
  // Transaction badges, as the browse page's table draws them (templates/messages/_table.html).
  var BADGES = {
    pending: ["pending", "status-warn", "Its transaction's marker has not arrived yet"],
    committed: ["committed", "status-ok", "Written in a transaction that committed"],
    aborted: ["aborted", "status-stop", "Its transaction was aborted: read_committed consumers never see it"],
    open: ["open transaction", "status-warn", "Its transaction is still open: read_committed consumers do not see it yet"],
    unknown: ["transactional", "", "Its transaction's marker is too far ahead to look for"]
  };
  function badge(span, transaction) {
    var b = BADGES[transaction];
    span.className = "badge txn-badge " + b[1];
    span.title = b[2];
    span.textContent = b[0];
  }
  // A marker decided a pending row: its badge and data-transaction change in place.
  function setOutcome(row, transaction) {
    var span = row.querySelector(".txn-badge");
    if (!span || !BADGES[transaction]) return;
    row.dataset.transaction = transaction;
    badge(span, transaction);
  }
  function markerRow(row, message) {
    cell(row, String(Number(message.offset)), "num");
    cell(row, message.timestamp_iso);
    var td = cell(row, "");
    td.colSpan = 3;
    var span = document.createElement("span");
    span.className = "badge " + (message.control === "ABORT" ? "status-stop" : "status-ok");
    span.textContent = message.control + " marker";
    td.appendChild(span);
    td.appendChild(document.createTextNode(" transaction marker of producer " + Number(message.producer_id)));
    cell(row, String(Number(message.size)), "num");
    return row;
  }
  // Records the console could not decode (a corrupt batch): their offsets and why, no bytes.
  function undecodableRow(row, message) {
    cell(row, String(Number(message.offset)), "num");
    cell(row, message.timestamp_iso);
    var td = cell(row, "");
    td.colSpan = 3;
    var span = document.createElement("span");
    span.className = "badge status-stop";
    span.textContent = "undecodable";
    td.appendChild(span);
    td.appendChild(document.createTextNode(" " + message.undecodable));
    cell(row, "", "num");
    return row;
  }
  function build(message, detailBase) {
    var row = document.createElement("tr");
    var partition = Number(message.partition), offset = Number(message.offset);
    row.dataset.partition = String(partition);
    row.dataset.offset = String(offset);
    cell(row, String(partition), "num");
    if (message.control) {
      row.dataset.control = message.control;
      return markerRow(row, message);
    }
    if (message.undecodable) {
      row.dataset.undecodable = "true";
      return undecodableRow(row, message);
    }
    var link = document.createElement("a");
    link.href = detailBase + partition + "/" + offset + "/";
    link.textContent = String(offset);
    var offsetCell = cell(row, "", "num");
    offsetCell.appendChild(link);
    if (BADGES[message.transaction]) {
      row.dataset.transaction = message.transaction;
      var span = document.createElement("span");
      badge(span, message.transaction);
      offsetCell.appendChild(document.createTextNode(" "));
      offsetCell.appendChild(span);
    }
    cell(row, message.timestamp_iso + " " + message.timestamp_type);
    cell(row, shown(message.key), "msg-key");
    cell(row, shown(message.value), "msg-value");
    cell(row, message.headers.map(function (h) { return h.name + "=" + shown(h); }).join(", "), "msg-headers");
    cell(row, String(Number(message.size)), "num");
    return row;
  }
  function socketUrl(path) {
    return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
  }
  function formCommand(form, action) {
    var command = {action: action};
    new FormData(form).forEach(function (value, name) {
      if (name !== "csrfmiddlewaretoken") command[name] = value;
    });
    return command;
  }
  window.MessagesRows = {build: build, setOutcome: setOutcome, socketUrl: socketUrl, formCommand: formCommand};
})();
