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
  function build(message, detailBase) {
    var row = document.createElement("tr");
    var partition = Number(message.partition), offset = Number(message.offset);
    row.dataset.partition = String(partition);
    row.dataset.offset = String(offset);
    cell(row, String(partition), "num");
    var link = document.createElement("a");
    link.href = detailBase + partition + "/" + offset + "/";
    link.textContent = String(offset);
    cell(row, "", "num").appendChild(link);
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
  window.MessagesRows = {build: build, socketUrl: socketUrl, formCommand: formCommand};
})();
