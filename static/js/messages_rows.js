// Rows of the search and tail tables, built from JSON with textContent only: a record's key,
// value or headers can never become markup or script, whatever they hold. Shared by
// messages_search.js and messages_tail.js (window.MessagesRows).
(function () {
  var units = window.consoleUnits;
  // The table's text for a key or value, cut as the browse page's rows cut it
  // (templates/messages/_table.html): hex in byte pairs, 16 to a line, as Decoded.display writes
  // it; a value's first TABLE_PREVIEW_HEX_BYTES then " …"; a key at KEY_CHARS ("…" included).
  var HEX_BYTES_PER_LINE = 16, TABLE_PREVIEW_HEX_BYTES = 32, KEY_CHARS = 80, ELLIPSIS = "\u2026";
  function groupHex(hex) {
    var lines = [];
    for (var i = 0; i < hex.length; i += HEX_BYTES_PER_LINE * 2) {
      lines.push(hex.slice(i, i + HEX_BYTES_PER_LINE * 2).match(/.{1,2}/g).join(" "));
    }
    return lines.join("\n");
  }
  function valuePreview(decoded) {
    var text = decoded.text;
    if (decoded.format !== "hex") return text;
    // The socket's preview may already have cut a long value's hex: it ends with "…".
    var cut = text.slice(-1) === ELLIPSIS, hex = cut ? text.slice(0, -1) : text;
    var shown = groupHex(hex.slice(0, TABLE_PREVIEW_HEX_BYTES * 2));
    return cut || hex.length > TABLE_PREVIEW_HEX_BYTES * 2 ? shown + " " + ELLIPSIS : shown;
  }
  function keyPreview(decoded) {
    var text = decoded.format === "hex" ? groupHex(decoded.text) : decoded.text;
    return text.length > KEY_CHARS ? text.slice(0, KEY_CHARS - 1) + ELLIPSIS : text;
  }
  // `label`: the column's name, which a phone shows beside the cell (table.cards in console.css).
  function cell(row, text, className, label) {
    var td = document.createElement("td");
    if (className) td.className = className;
    if (label) td.dataset.label = label;
    td.textContent = text;
    row.appendChild(td);
    return td;
  }
  function tag(parent, text, title) {
    var span = document.createElement("span");
    span.className = "tag fmt";
    span.textContent = text;
    if (title) span.title = title;
    parent.appendChild(document.createTextNode(" "));
    parent.appendChild(span);
  }
  // A decoded key or value: null, empty and withheld said in words; hex grouped and tagged.
  function decodedCell(row, decoded, className, label, preview) {
    var td = cell(row, "", className, label);
    var text = decoded.text;
    if (decoded.format === "withheld" || text === null || text === "") {
      var i = document.createElement("i");
      i.textContent = decoded.format === "withheld" ? "withheld" : (text === null ? "null" : "empty");
      if (decoded.format === "withheld") { i.className = "withheld"; i.title = decoded.error; }
      td.appendChild(i);
      return td;
    }
    var span = document.createElement("span");
    span.className = decoded.format === "hex" ? "text hex" : "text";
    span.textContent = preview(decoded);
    td.appendChild(span);
    td.title = text;
    if (decoded.format !== "string") tag(td, decoded.format, decoded.note || decoded.format);
    // Confluent's framing: the schema id, and the subject the registry keeps it under.
    if (decoded.schema_id !== undefined && decoded.schema_id !== null) {
      tag(td, "schema " + decoded.schema_id + (decoded.subject ? " · " + decoded.subject : ""), decoded.note);
    }
    if (decoded.error) {
      var bad = document.createElement("span");
      bad.className = "bad";
      bad.textContent = " (" + decoded.error + ")";
      td.appendChild(bad);
    }
    return td;
  }
  // Headers as the browse page's rows draw them: a tag each, "name=value", a value cut at
  // HEADER_CHARS ("…" included), hex grouped in byte pairs as values are.
  var HEADER_CHARS = 60;
  function cut(text, chars) { return text.length > chars ? text.slice(0, chars - 1) + ELLIPSIS : text; }
  function headersCell(row, headers) {
    var td = cell(row, "", "msg-headers", "Headers");
    headers.forEach(function (h, i) {
      var span = document.createElement("span");
      span.className = "tag header";
      span.textContent = h.name + "=";
      if (h.format === "withheld") {
        span.appendChild(document.createTextNode("withheld"));
      } else if (h.format === "hex" && h.text) {
        var hex = document.createElement("span");
        hex.className = "hex";
        hex.textContent = cut(groupHex(h.text), HEADER_CHARS);
        span.appendChild(hex);
      } else {
        span.appendChild(document.createTextNode(h.text === null ? "null" : cut(h.text, HEADER_CHARS)));
      }
      if (i) td.appendChild(document.createTextNode(" "));
      td.appendChild(span);
    });
    return td;
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
  function timeCell(row, message) {
    var td = cell(row, "", "msg-time", "Timestamp");
    var time = document.createElement("time");
    var when = new Date(Number(message.timestamp));
    time.dateTime = message.timestamp_iso;
    time.title = message.timestamp_iso.replace("T", " ").replace("Z", " UTC");
    time.textContent = units.timestamp(when);
    td.appendChild(time);
    // The age beside it, as the browse page's `when` filter writes it: units.js keeps every
    // time[data-ago] current, these rows' too.
    var age = document.createElement("small"), ago = document.createElement("time");
    age.className = "ago";
    ago.dateTime = message.timestamp_iso;
    ago.setAttribute("data-ago", "");
    ago.textContent = units.ago(when);
    age.appendChild(ago);
    td.appendChild(document.createTextNode(" "));
    td.appendChild(age);
    var small = document.createElement("small");
    small.textContent = " " + message.timestamp_type;
    td.appendChild(small);
  }
  function markerRow(row, message) {
    cell(row, String(Number(message.offset)), "num msg-offset", "Offset");
    timeCell(row, message);
    var td = cell(row, "");
    td.colSpan = 3;
    var span = document.createElement("span");
    span.className = "badge " + (message.control === "ABORT" ? "status-stop" : "status-ok");
    span.textContent = message.control + " marker";
    td.appendChild(span);
    td.appendChild(document.createTextNode(" transaction marker of producer " + Number(message.producer_id)));
    cell(row, units.size(Number(message.size)), "num msg-size", "Size");
    return row;
  }
  // Records the console could not decode (a corrupt batch): their offsets and why, no bytes.
  function undecodableRow(row, message) {
    cell(row, String(Number(message.offset)), "num msg-offset", "Offset");
    timeCell(row, message);
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
  // `detailQuery`: the decoders chosen on the page, so a record opens read the same way.
  function build(message, detailBase, detailQuery) {
    var row = document.createElement("tr");
    var partition = Number(message.partition), offset = Number(message.offset);
    row.dataset.partition = String(partition);
    row.dataset.offset = String(offset);
    row.dataset.timestamp = String(Number(message.timestamp));
    cell(row, String(partition), "num msg-partition", "Partition");
    if (message.control) {
      row.dataset.control = message.control;
      return markerRow(row, message);
    }
    if (message.undecodable) {
      row.dataset.undecodable = "true";
      return undecodableRow(row, message);
    }
    var link = document.createElement("a");
    link.href = detailBase + partition + "/" + offset + "/" + (detailQuery ? "?" + detailQuery : "");
    link.textContent = String(offset);
    var offsetCell = cell(row, "", "num msg-offset", "Offset");
    offsetCell.appendChild(link);
    if (BADGES[message.transaction]) {
      row.dataset.transaction = message.transaction;
      var span = document.createElement("span");
      badge(span, message.transaction);
      offsetCell.appendChild(document.createTextNode(" "));
      offsetCell.appendChild(span);
    }
    timeCell(row, message);
    decodedCell(row, message.key, "msg-key", "Key", keyPreview);
    decodedCell(row, message.value, "msg-value", "Value", valuePreview);
    headersCell(row, message.headers);
    var size = cell(row, units.size(Number(message.size)), "num msg-size", "Size");
    size.title = units.count(Number(message.size)) + " bytes";
    return row;
  }
  // Wrap every match of `pattern` (a RegExp with the g flag) in the cells' text in <mark>,
  // splitting text nodes: still no markup from the record itself.
  function highlight(row, pattern, selector) {
    row.querySelectorAll(selector).forEach(function (td) {
      var walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
      var nodes = [];
      while (walker.nextNode()) {
        if (!walker.currentNode.parentNode.closest(".tag.fmt, .bad, i")) nodes.push(walker.currentNode);
      }
      nodes.forEach(function (node) {
        var text = node.nodeValue, last = 0, found = false, fragment = document.createDocumentFragment();
        pattern.lastIndex = 0;
        var m;
        while ((m = pattern.exec(text)) !== null) {
          if (m[0] === "") { pattern.lastIndex += 1; continue; }
          found = true;
          fragment.appendChild(document.createTextNode(text.slice(last, m.index)));
          var mark = document.createElement("mark");
          mark.textContent = m[0];
          fragment.appendChild(mark);
          last = m.index + m[0].length;
        }
        if (!found) return;
        fragment.appendChild(document.createTextNode(text.slice(last)));
        node.parentNode.replaceChild(fragment, node);
      });
    });
  }
  // Insert a row where its (timestamp, partition, offset) belongs: results read partition by
  // partition still read as one timeline. `newestFirst` sorts descending.
  function sortKey(row) {
    return [Number(row.dataset.timestamp), Number(row.dataset.partition), Number(row.dataset.offset)];
  }
  function before(a, b) {
    for (var i = 0; i < 3; i++) { if (a[i] !== b[i]) return a[i] < b[i]; }
    return false;
  }
  function insertSorted(tbody, row, newestFirst) {
    var key = sortKey(row), rows = tbody.rows, lo = 0, hi = rows.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1, other = sortKey(rows[mid]);
      var goesBefore = newestFirst ? before(other, key) : before(key, other);
      if (goesBefore) hi = mid; else lo = mid + 1;
    }
    tbody.insertBefore(row, lo < rows.length ? rows[lo] : null);
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
  function formatQuery(form) {
    var params = new URLSearchParams();
    ["key_format", "value_format", "header_format"].forEach(function (name) {
      var field = form.querySelector("[name=" + name + "]");
      if (field && field.value) params.set(name, field.value);
    });
    return params.toString();
  }
  window.MessagesRows = {build: build, setOutcome: setOutcome, socketUrl: socketUrl, formCommand: formCommand,
                         formatQuery: formatQuery, highlight: highlight, insertSorted: insertSorted};
})();
