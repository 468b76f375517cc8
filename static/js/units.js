// Numbers as people read them, in the browser: the same rules as console/formatting.py (the
// server renders pages with that; this file formats numbers that scripts update live, and
// keeps times in the reader's own time zone). window.consoleUnits:
//   duration(ms) "7 d", "1 h 55 min"   durationSeconds(s)   size(bytes) "1.9 MiB"   sizeRate(bytes)
//   count(n) "51,234"   rate(perSecond) "0.8/s"   rate(perSecond, "record") "12 records/s", "1 record/s"
//   percent(x) "12.3 %"   percentChange(x) "+24 %", "-44 %"
//   timestamp(date) "2026-11-23 15:03:05 +01:00" (local)   ago(date, now) "2 min ago"
//   parseDuration(text, unit) -> number in unit ("ms", "s", "min", "h")   parseSize(text) -> bytes
//   (both throw an Error whose message is the sentence the server would answer)
//   sortKey(text) -> the number behind a formatted cell ("1.9 MiB", "7 d", "51,234"), or null
// On every page, and again in each live fragment after a push:
//   <time data-when datetime=ISO>  shows the local time with its UTC offset (UTC stays on hover)
//   <time data-ago datetime=ISO>   says "2 min ago", kept current every 5 s
//   <input data-human-unit="ms|s|min|h|bytes" data-unlimited="-1">  gets a preview of the raw
//     value it sends, under it ("Sends 259200000 ms (3 d)"); the server parses again on submit.
(function () {
  var NONE = "\u2014";
  var MS = [["d", 86400000], ["h", 3600000], ["min", 60000], ["s", 1000]];
  var SIZE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
  var UNIT_MS = {ms: 1, s: 1000, min: 60000, h: 3600000};
  var UNIT_NAMES = {1: "millisecond", 1000: "second", 60000: "minute", 3600000: "hour"};
  var DURATION_WORDS = {ms: 1, millisecond: 1, milliseconds: 1, s: 1000, sec: 1000, secs: 1000, second: 1000,
    seconds: 1000, m: 60000, min: 60000, mins: 60000, minute: 60000, minutes: 60000, h: 3600000, hr: 3600000,
    hrs: 3600000, hour: 3600000, hours: 3600000, d: 86400000, day: 86400000, days: 86400000, w: 604800000,
    week: 604800000, weeks: 604800000};
  var SIZE_WORDS = {b: 1, "byte": 1, bytes: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, k: 1024, kib: 1024,
    m: 1048576, mib: 1048576, g: 1073741824, gib: 1073741824, t: 1099511627776, tib: 1099511627776};
  var UNLIMITED_WORDS = ["unlimited", "forever", "never", "infinite", "none", "no limit"];

  function roundHalfUp(x, decimals) {
    var factor = Math.pow(10, decimals);
    return Math.floor(x * factor + 0.5 + 1e-9) / factor;
  }
  function trim(x, decimals) {
    return roundHalfUp(x, decimals).toLocaleString("en-US", {maximumFractionDigits: decimals});
  }
  function missing(x) { return x === null || x === undefined || x === "" || isNaN(Number(x)); }

  function duration(ms) {
    if (missing(ms)) return NONE;
    ms = Number(ms);
    if (ms < 0) return "-" + duration(-ms);
    if (ms < 1000) return trim(ms, ms >= 10 ? 0 : 1) + " ms";
    if (ms < 10000 && ms % 1000) return trim(ms / 1000, 1) + " s";
    for (var i = 0; i < MS.length; i++) {
      var name = MS[i][0], unit = MS[i][1];
      if (ms < unit) continue;
      var smaller = i + 1 < MS.length ? MS[i + 1][1] : unit;
      var rounded = roundHalfUp(ms / smaller, 0) * smaller;
      if (i > 0 && rounded >= MS[i - 1][1]) return duration(rounded);
      var big = Math.floor(rounded / unit), small = rounded - big * unit;
      return trim(big, 0) + " " + name + (small ? " " + trim(small / smaller, 0) + " " + MS[i + 1][0] : "");
    }
  }
  function durationSeconds(s) { return missing(s) ? NONE : duration(Number(s) * 1000); }
  function size(n) {
    if (missing(n)) return NONE;
    n = Number(n);
    if (n < 0) return "-" + size(-n);
    if (roundHalfUp(n, 0) < 1024) return trim(n, 0) + " B";
    var exponent = 0, value = n;
    while (value >= 1024 && exponent + 1 < SIZE_UNITS.length) { exponent += 1; value /= 1024; }
    var decimals = value < 100 ? 1 : 0;
    if (roundHalfUp(value, decimals) >= 1024 && exponent + 1 < SIZE_UNITS.length) {
      exponent += 1; value /= 1024; decimals = 1;
    }
    return trim(value, decimals) + " " + SIZE_UNITS[exponent];
  }
  function sizeRate(n) { return missing(n) ? NONE : size(n) + "/s"; }
  function count(n) { return missing(n) ? NONE : trim(Number(n), 0); }
  function rate(x, noun) {
    if (missing(x)) return NONE;
    var number = trim(Number(x), Math.abs(Number(x)) < 100 ? 1 : 0);
    return noun ? number + " " + (number === "1" ? noun : noun + "s") + "/s" : number + "/s";
  }
  function percent(x) { return missing(x) ? NONE : trim(Number(x), 1) + " %"; }
  function percentChange(x) {
    if (missing(x)) return NONE;
    var value = Number(x), magnitude = trim(Math.abs(value), 0);
    if (magnitude === "0") return "0 %";
    return (value > 0 ? "+" : "-") + magnitude + " %";
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function timestamp(date) {
    var offset = -date.getTimezoneOffset();
    var sign = offset >= 0 ? "+" : "-";
    offset = Math.abs(offset);
    return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + " " +
      pad(date.getHours()) + ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds()) + " " +
      sign + pad(Math.floor(offset / 60)) + ":" + pad(offset % 60);
  }
  function ago(date, now) {
    var seconds = ((now || new Date()) - date) / 1000;
    if (Math.abs(seconds) < 1) return "just now";
    var units = [["d", 86400], ["h", 3600], ["min", 60], ["s", 1]];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(seconds) >= units[i][1]) {
        var amount = Math.floor(Math.abs(seconds) / units[i][1]).toLocaleString("en-US");
        return seconds > 0 ? amount + " " + units[i][0] + " ago" : "in " + amount + " " + units[i][0];
      }
    }
  }

  function terms(text) {
    var found = [], re = /\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-zA-Z]*)/y, position = 0;
    text = text.trim();
    while (position < text.length) {
      re.lastIndex = position;
      var match = re.exec(text);
      if (!match || re.lastIndex === position) return [];
      found.push([parseFloat(match[1]), match[2].toLowerCase()]);
      position = re.lastIndex;
    }
    return found;
  }
  function parseDuration(text, unit) {
    var unitMs = UNIT_MS[unit || "ms"], raw = (text || "").trim();
    if (/^-?\d+$/.test(raw)) return parseInt(raw, 10);
    var found = terms(raw);
    var bad = !found.length || found.some(function (t) { return t[1] && !(t[1] in DURATION_WORDS); }) ||
      (found.length > 1 && found.some(function (t) { return !t[1]; }));
    if (bad) {
      throw new Error("\u201c" + raw + "\u201d is not a duration: write a number with a unit, such as 3d, 12h, " +
        "30min, 45s or 500ms, or a plain number of " + UNIT_NAMES[unitMs] + "s.");
    }
    var total = found.reduce(function (sum, t) { return sum + t[0] * (t[1] ? DURATION_WORDS[t[1]] : unitMs); }, 0);
    var value = total / unitMs;
    if (Math.abs(value - Math.round(value)) > 1e-9) {
      throw new Error("\u201c" + raw + "\u201d is not a whole number of " + UNIT_NAMES[unitMs] + "s: it is " +
        trim(value, 3) + ".");
    }
    return Math.round(value);
  }
  function parseSize(text) {
    var raw = (text || "").trim();
    if (/^-?\d+$/.test(raw)) return parseInt(raw, 10);
    var found = terms(raw);
    if (found.length !== 1 || !(found[0][1] in SIZE_WORDS)) {
      throw new Error("\u201c" + raw + "\u201d is not a size: write a number with a unit, such as 512KiB, 10MB, " +
        "1GiB (kB, MB, GB count in 1000s; KiB, MiB, GiB in 1024s), or a plain number of bytes.");
    }
    var value = found[0][0] * SIZE_WORDS[found[0][1]];
    if (Math.abs(value - Math.round(value)) > 1e-6) {
      throw new Error("\u201c" + raw + "\u201d is " + value + " bytes: a size is a whole number of bytes.");
    }
    return Math.round(value);
  }

  var SORT_UNITS = {b: 1, kib: 1024, mib: 1048576, gib: 1073741824, tib: 1099511627776, pib: 1125899906842624,
    ms: 1, s: 1000, min: 60000, h: 3600000, d: 86400000};
  function sortKey(text) {
    var raw = text.replace(/\u00a0/g, " ").replace(/\/s$/, "").trim();
    if (raw === "unlimited") return Infinity;
    var parts = raw.match(/^(-?[\d.,]+)(?:\s*(b|kib|mib|gib|tib|pib|ms|s|min|h|d))?((?:\s+[\d.,]+\s*(?:h|min|s))?)$/i);
    if (!parts) return null;
    var value = parseFloat(parts[1].replace(/,/g, "")) * (parts[2] ? SORT_UNITS[parts[2].toLowerCase()] : 1);
    var rest = parts[3].trim().match(/^([\d.,]+)\s*(h|min|s)$/);
    if (rest) value += parseFloat(rest[1]) * SORT_UNITS[rest[2]];
    return value;
  }

  function preview(input) {
    var output = input.nextElementSibling;
    if (!output || !output.classList.contains("raw-preview")) {
      output = document.createElement("small");
      output.className = "raw-preview";
      output.setAttribute("aria-live", "polite");
      input.insertAdjacentElement("afterend", output);
    }
    var unit = input.dataset.humanUnit, text = input.value.trim();
    if (!text) { output.textContent = ""; return; }
    try {
      if (UNLIMITED_WORDS.indexOf(text.toLowerCase()) >= 0 && input.dataset.unlimited) {
        output.textContent = "Sends " + input.dataset.unlimited + " (unlimited)";
      } else if (unit === "bytes") {
        var bytes = parseSize(text);
        output.textContent = "Sends " + bytes + " bytes (" + size(bytes) + ")";
      } else {
        var value = parseDuration(text, unit);
        // Zero in the config's own unit ("0 h"), as formatting.config_human writes it.
        output.textContent = "Sends " + value + " " + unit +
          (value === 0 ? "" : " (" + duration(value * UNIT_MS[unit]) + ")");
      }
      output.classList.remove("error");
    } catch (error) {
      output.textContent = error.message;
      output.classList.add("error");
    }
  }

  function refresh(root) {
    root.querySelectorAll("time[data-when]").forEach(function (element) {
      var date = new Date(element.getAttribute("datetime"));
      if (!isNaN(date)) element.textContent = timestamp(date);
    });
    root.querySelectorAll("time[data-ago]").forEach(function (element) {
      var date = new Date(element.getAttribute("datetime"));
      if (!isNaN(date)) element.textContent = ago(date);
    });
    root.querySelectorAll("input[data-human-unit]").forEach(function (input) {
      if (!input.dataset.previewing) {
        input.dataset.previewing = "true";
        input.addEventListener("input", function () { preview(input); });
      }
      preview(input);
    });
  }

  window.consoleUnits = {duration: duration, durationSeconds: durationSeconds, size: size, sizeRate: sizeRate,
    count: count, rate: rate, percent: percent, percentChange: percentChange, timestamp: timestamp, ago: ago,
    parseDuration: parseDuration, parseSize: parseSize, sortKey: sortKey, refresh: refresh};
  document.addEventListener("DOMContentLoaded", function () { refresh(document); });
  document.addEventListener("live:updated", function (event) { refresh(event.target); });
  setInterval(function () {
    document.querySelectorAll("time[data-ago]").forEach(function (element) {
      var date = new Date(element.getAttribute("datetime"));
      if (!isNaN(date)) element.textContent = ago(date);
    });
  }, 5000);
})();
