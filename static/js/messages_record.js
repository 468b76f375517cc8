// One record's page: the value as a collapsible tree when it is a document (JSON, or Avro,
// Protobuf and MessagePack as the console reads them), a Raw switch back to the text, and copy
// buttons for the key, the value, the headers and the whole record. Built with textContent
// only: a record's bytes never become markup.
(function () {
  var data = document.getElementById("record-data");
  if (!data) return;
  var record = JSON.parse(data.textContent);
  var DOCUMENTS = ["json", "avro", "protobuf", "msgpack"];
  var OPEN_CHILDREN = 200;   // larger objects and arrays start collapsed

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function scalar(value) {
    if (value === null) return el("span", "j-null", "null");
    if (typeof value === "string") return el("span", "j-string", JSON.stringify(value));
    if (typeof value === "number") return el("span", "j-number", String(value));
    return el("span", "j-bool", String(value));
  }
  function label(key) {
    var span = el("span", "j-key", key === null ? "" : (typeof key === "number" ? key : JSON.stringify(key)) + ": ");
    return span;
  }
  function tree(value, key, depth) {
    if (value === null || typeof value !== "object") {
      var line = el("div", "j-line");
      line.appendChild(label(key));
      line.appendChild(scalar(value));
      return line;
    }
    var isArray = Array.isArray(value);
    var keys = isArray ? value.map(function (_, i) { return i; }) : Object.keys(value);
    var node = el("details", "j-node");
    node.open = keys.length <= OPEN_CHILDREN && depth < 8;
    var summary = el("summary");
    summary.appendChild(label(key));
    summary.appendChild(el("span", "j-brace", isArray ? "[" : "{"));
    summary.appendChild(el("span", "j-count", " " + keys.length + (isArray ? " items " : " fields ")));
    summary.appendChild(el("span", "j-brace j-close-inline", isArray ? "]" : "}"));
    node.appendChild(summary);
    var children = el("div", "j-children");
    keys.forEach(function (k) { children.appendChild(tree(value[k], k, depth + 1)); });
    node.appendChild(children);
    node.appendChild(el("div", "j-brace", isArray ? "]" : "}"));
    return node;
  }

  // The value: a tree by default when it parses as a document, the raw text a click away.
  var treeBox = document.getElementById("value-tree");
  var raw = document.getElementById("record-value");
  var rawSwitch = document.getElementById("value-raw-switch");
  var value = record.value;
  var parsed;
  if (value.text && DOCUMENTS.indexOf(value.format) >= 0 && !value.error) {
    try { parsed = JSON.parse(value.text); } catch (e) { parsed = undefined; }
  }
  if (parsed !== undefined && parsed !== null && typeof parsed === "object") {
    treeBox.appendChild(tree(parsed, null, 0));
    treeBox.hidden = false;
    raw.hidden = true;
    rawSwitch.hidden = false;
    rawSwitch.addEventListener("click", function () {
      var showRaw = raw.hidden;
      raw.hidden = !showRaw;
      treeBox.hidden = showRaw;
      rawSwitch.textContent = showRaw ? "Tree" : "Raw";
      rawSwitch.setAttribute("aria-pressed", String(showRaw));
    });
  }

  // Copy buttons. The clipboard API needs a secure context (https, or localhost); elsewhere the
  // text is put in a selected text area and copied the old way.
  var copied = document.getElementById("copied");
  function texts() {
    var headers = record.headers.map(function (h) { return {name: h.name, value: h.text, format: h.format}; });
    return {
      key: record.key.text === null ? "null" : record.key.text,
      value: value.text === null ? "null" : value.text,
      headers: JSON.stringify(headers, null, 2),
      record: JSON.stringify({topic: record.topic, partition: record.partition, offset: record.offset,
        timestamp: record.timestamp, timestamp_type: record.timestamp_type,
        key: record.key.text, key_format: record.key.format, value: parsed !== undefined ? parsed : value.text,
        value_format: value.format, headers: headers}, null, 2)
    };
  }
  function fallbackCopy(text) {
    var area = el("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }
  function say(message) {
    copied.textContent = message;
    copied.hidden = false;
  }
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var what = button.dataset.copy;
      var text = texts()[what];
      var write = navigator.clipboard && window.isSecureContext ? navigator.clipboard.writeText(text) : fallbackCopy(text);
      write.then(function () {
        button.dataset.copied = "true";
        say("Copied the " + what + " (" + window.consoleUnits.count(text.length) + " characters).");
      }, function () { say("The browser refused to copy; select the text instead."); });
    });
  });
})();
