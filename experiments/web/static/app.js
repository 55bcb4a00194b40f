// The Saboteur table page: plain JavaScript, no build step. The server sends the seat's view only (board SVG,
// hand, legal moves, public log); this file draws it and turns clicks into action ids.
"use strict";
const $ = id => document.getElementById(id);
let options = null;      // /api/options
let table = null;        // the current payload
let selected = null;     // selected hand kind
let rot = 0;             // rotation of the selected card
let seenStep = 0;        // last log step shown (new lines are marked)
let seenRounds = 0;      // round ends already announced
let replay = null;       // {id, frames, i, timer}
let anim = null;         // the animation playing now: {skip, wake}
const ANIM_KEY = "saboteur-anim-ms";

function showError(message) {
  const el = $("error");
  el.textContent = message || "";
  el.hidden = !message;
}

async function api(path, body) {
  const init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"},
                                          body: JSON.stringify(body)};
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({error: `HTTP ${res.status}`}));
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

// ---- tabs and forms ------------------------------------------------------------------------------------------
function tab(name) {
  $("play").hidden = name !== "play";
  $("replay").hidden = name !== "replay";
  $("tab-play").classList.toggle("active", name === "play");
  $("tab-replay").classList.toggle("active", name === "replay");
}

function fillGameForm() {
  for (const sel of [$("f-game"), $("r-game")]) {
    sel.innerHTML = "";
    for (const [name, g] of Object.entries(options.games)) sel.add(new Option(g.title, name));
  }
  const d = options.defaults || {};
  $("f-game").value = d.game || "base";
  gameChanged();
  if (d.players) $("f-players").value = d.players;
  if (d.seat !== undefined && d.seat !== null) $("f-seat").value = d.seat;
  if (d.bots) {  // a list (one agent per seat) from the command line becomes one more choice
    const value = Array.isArray(d.bots) ? d.bots.join(",") : d.bots;
    if (![...$("f-bots").options].some(o => o.value === value)) $("f-bots").add(new Option(value, value));
    $("f-bots").value = value;
  }
  if (d.seed !== undefined && d.seed !== null) $("f-seed").value = d.seed;
  if (d.rounds) $("f-rounds").value = d.rounds;
  $("r-log").hidden = !options.log_replay;
  rGameChanged();
}

function gameChanged() {
  const g = options.games[$("f-game").value];
  $("f-players").min = g.min_players; $("f-players").max = g.max_players; $("f-players").value = g.default_players;
  $("f-bots").innerHTML = "";
  for (const b of g.bots) $("f-bots").add(new Option(b, b));
  $("f-bots").value = g.default_bot;
}

function rGameChanged() {
  const g = options.games[$("r-game").value];
  $("r-players").min = g.min_players; $("r-players").max = g.max_players; $("r-players").value = g.default_players;
}

function myTables() {
  try { return JSON.parse(localStorage.getItem("saboteur-tables") || "[]"); } catch (e) { return []; }
}

function remember(id) {
  const ids = myTables().filter(t => t !== id);
  ids.unshift(id);
  localStorage.setItem("saboteur-tables", JSON.stringify(ids.slice(0, 8)));
  drawMyTables();
}

function drawMyTables() {
  const span = $("my-tables");
  span.innerHTML = "";
  const ids = myTables();
  if (ids.length) span.append("your tables: ");
  ids.forEach((id, n) => {
    const a = document.createElement("a");
    a.href = "#table=" + id; a.textContent = `#${n + 1}`; a.className = "table-link"; a.dataset.table = id;
    span.append(a, " ");
  });
}

async function newTable(ev) {
  ev.preventDefault();
  const seed = $("f-seed").value;
  const body = {game: $("f-game").value, players: +$("f-players").value, seat: +$("f-seat").value,
                bots: $("f-bots").value.includes(",") ? $("f-bots").value.split(",") : $("f-bots").value,
                rounds: +$("f-rounds").value};
  if (seed !== "") body.seed = +seed;
  try {
    const data = await api("/api/tables", body);
    seenStep = 0; seenRounds = 0;
    table = data;                            // route() must not load it again
    location.hash = "table=" + data.table;   // a reload comes back to this table
    remember(data.table);
    await animate(data);
  } catch (e) { showError(e.message); }
}

async function loadTable(id) {
  stopAnimation();
  try {
    const data = await api("/api/tables/" + encodeURIComponent(id));
    seenStep = data.log.length ? data.log[data.log.length - 1].step : 0;
    seenRounds = data.round_ends.length;
    draw(data);
  } catch (e) { showError(e.message); }
}

// ---- the others' moves, one after the other ----------------------------------------------------------------
// The server answers a move with its steps: the person's move and every agent's reply, each with the board of the
// person's view after it. The page shows the person's move at once, then plays the agents' moves one by one
// (the card fades and slides onto its cell, a map's goal and the players whose tools changed are marked, the log
// line appears); a click or a key skips the rest, the end of a round waits for "continue", and with
// prefers-reduced-motion the steps change without motion. body[data-animated] counts the agents' moves played,
// body[data-skipped] those skipped.
function animationMs() {
  const v = Number(localStorage.getItem(ANIM_KEY) ?? 500);
  return Number.isFinite(v) ? Math.max(0, Math.min(2000, v)) : 500;
}

function bump(name, n) { document.body.dataset[name] = String(+(document.body.dataset[name] || 0) + n); }

function pause(ms) {  // resolves after ms, or at once when the animation is skipped
  return new Promise(resolve => {
    if (anim.skip) return resolve();
    const t = setTimeout(resolve, ms);
    anim.wake = () => { clearTimeout(t); resolve(); };
  });
}

function skipAnimation(ev) {
  if (!anim || anim.skip || (ev.target instanceof Node && $("round-over").contains(ev.target))) return;
  if (ev.type === "keydown" && ev.key !== "Escape" && ev.key !== " " && ev.key !== "Enter") return;
  ev.preventDefault(); ev.stopPropagation();  // the click only skips: it plays no card
  anim.skip = true;
  if (anim.wake) anim.wake();
}

function showStep(data, step) {  // one move's board, players and log lines (the rest of the page as in data)
  $("board").innerHTML = step.board;
  for (const cell of step.cells) document.querySelector(`#board g.cell[data-cell="${cell}"]`)?.classList.add("arrive");
  for (const cell of step.aim) document.querySelector(`#board g.cell[data-cell="${cell}"]`)?.classList.add("aim");
  drawSeats({seats: step.seats});
  for (const tr of $("seats").tBodies[0].rows) {
    tr.classList.toggle("acting", +tr.dataset.seat === step.seat);
    tr.classList.toggle("hit", step.hit.includes(+tr.dataset.seat));
  }
  drawLog({log: data.log.filter(e => e.step <= step.step)}, step.step);
  $("turn").textContent = step.mine ? "your move" : `${step.name} plays…`;
}

function stopAnimation() {  // another table or answer takes the page: the running animation ends without drawing
  if (!anim) return;
  anim.skip = true;
  if (anim.wake) anim.wake();
  anim = null;
  $("round-over").hidden = true;
  delete document.body.dataset.animating;
}

async function animate(data) {
  const ms = animationMs();
  const theirs = data.steps.filter(s => !s.mine).length;
  stopAnimation();
  if (!theirs && !data.steps.some(s => s.round_end)) return draw(data);
  const me = anim = {skip: ms <= 0, wake: null};
  const keep = seenStep;
  render(data, false);  // hand, title and buttons as they will be; the board, players and log go step by step
  seenStep = keep;
  document.body.dataset.animating = "1";
  document.documentElement.style.setProperty("--anim", `${Math.max(ms, 1)}ms`);
  let played = 0;
  for (const step of data.steps) {
    if (me.skip && !step.round_end) continue;
    showStep(data, step);
    if (!step.mine) { played += 1; bump("animated", 1); }
    if (step.round_end && seenRounds < data.round_ends.length) {  // the round as it ended, before the next deal
      await roundOver(data.round_ends[seenRounds++]);
    } else if (!step.mine) {
      await pause(ms);
    }
    if (anim !== me) return bump("skipped", theirs - played);  // stopped: the page shows something else now
  }
  anim = null;
  bump("skipped", theirs - played);
  delete document.body.dataset.animating;
  seenStep = keep;  // the final page marks every line of this change as new
  draw(data);
}

function roundOver(r) {  // the round's panel; resolves on "continue"
  $("ro-body").innerHTML = `<h3>${esc(r.lines[0])}</h3>${r.svg}<p>${r.lines.slice(1).map(esc).join("<br>")}</p>`;
  $("round-over").hidden = false;
  return new Promise(resolve => {
    $("ro-close").onclick = () => { $("round-over").hidden = true; resolve(); };
  });
}

// ---- the table -----------------------------------------------------------------------------------------------
function draw(data) {
  render(data);
  window.lastPayload = data;  // for tests and the curious: exactly what the server sent
  document.body.dataset.version = `${data.table}:${data.version}`;
  keepThinking(data);
}

// The server gives the agents a few seconds per request; moves left over ("thinking") are asked for again, one
// request after the other, while this table is on the page.
let advancing = null;  // "table:version" being advanced

function keepThinking(data) {
  const key = `${data.table}:${data.version}`;
  if (!data.thinking || data.final || advancing === key) return;
  advancing = key;
  setTimeout(async () => {
    if (!table || table.table !== data.table || table.version !== data.version) { advancing = null; return; }
    try {
      const next = await api(`/api/tables/${data.table}/advance`, {version: data.version});
      advancing = null;
      await animate(next);
    } catch (e) { advancing = null; showError(e.message); }
  }, 150);
}

function render(data, announce = true) {  // announce: open the panel of a round end not yet shown
  showError("");
  table = data;
  $("table").hidden = false;
  const colour = data.game === "duel" ? ["blue", "green"][data.seat] + ", " : "";
  $("t-title").textContent = `${data.title} — ${data.players} players — you sit in seat ${data.seat} (${colour}table ${data.table})`;
  $("board").innerHTML = data.board;
  $("me").innerHTML = data.me.map(esc).join("<br>");
  $("turn").textContent = data.final ? "game over" : data.my_turn ? "your turn" : "the bots are thinking…";
  if (selected !== null && !data.hand.some(c => c.kind === selected) && !data.moves.some(m => m.card === selected))
    selected = null;
  drawSeats(data);
  drawLog(data);
  drawRounds(data, announce);
  drawFinal(data);
  drawHand();
  drawMoves();
}

function esc(s) {
  return String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
}

function drawSeats(data) {
  const body = $("seats").tBodies[0];
  body.innerHTML = "";
  for (const s of [...data.seats].sort((a, b) => a.seat - b.seat)) {
    const tr = body.insertRow();
    tr.className = s.to_act ? "to-act" : "";
    tr.dataset.seat = s.seat;
    const notes = [s.role ? "last round: " + s.role : "", ...s.marks].filter(Boolean).join("; ");
    for (const text of [s.to_act ? "▶" : "", s.name, s.hand, s.gold, s.broken.join(", ") || "—", notes])
      tr.insertCell().textContent = text;
  }
}

function drawLog(data, current) {  // current: the step being animated (its lines arrive)
  const ol = $("log");
  ol.innerHTML = "";
  let last = seenStep;
  for (const e of data.log) {
    const li = document.createElement("li");
    li.textContent = `r${e.round + 1}: ${e.text}`;
    if (e.step > seenStep) li.className = e.step === current ? "new arrive" : "new";
    last = Math.max(last, e.step);
    ol.append(li);
  }
  seenStep = last;
  ol.scrollTop = ol.scrollHeight;
}

function drawRounds(data, announce) {
  const div = $("rounds");
  div.innerHTML = "";
  data.round_ends.forEach((r, n) => {
    const d = document.createElement("details");
    d.innerHTML = `<summary>${esc(r.lines[0])}</summary>${r.svg}<p>${r.lines.slice(1).map(esc).join("<br>")}</p>`;
    d.open = n === data.round_ends.length - 1;
    div.append(d);
  });
  if (announce && data.round_ends.length > seenRounds) {  // a round end no animation has shown
    roundOver(data.round_ends[data.round_ends.length - 1]);
    seenRounds = data.round_ends.length;
  }
}

function drawFinal(data) {
  const div = $("final");
  div.hidden = !data.final;
  if (!data.final) return;
  div.innerHTML = "<h3>Final ranking</h3><ol>" +
    data.final.map(f => `<li>${esc(f.name)}: ${f.score} (rank ${f.rank})</li>`).join("") + "</ol>";
}

function movesOf(kind) {  // the moves that play or discard this card (a duel's pairs under both cards)
  return table.moves.filter(m => m.card === kind || m.cards.includes(kind));
}

function drawHand() {
  const div = $("hand");
  div.innerHTML = "";
  for (const c of table.hand) {
    const el = document.createElement("div");
    const playable = movesOf(c.kind).length > 0;
    el.className = "card" + (c.kind === selected ? " selected" : "") + (playable ? "" : " unplayable");
    el.dataset.kind = c.kind;
    el.dataset.code = c.code;
    el.title = `${c.name}\n${c.text}`;
    el.innerHTML = (c.kind === selected && rot === 1 && c.svg180 ? c.svg180 : c.svg) +
      (c.count > 1 ? `<span class="count">x${c.count}</span>` : "");
    el.onclick = () => { selected = selected === c.kind ? null : c.kind; rot = 0; drawHand(); drawMoves(); };
    div.append(el);
  }
}

function drawMoves() {
  for (const g of document.querySelectorAll("#board g.cell.legal")) {
    g.classList.remove("legal"); g.onclick = null;
  }
  const choices = $("choices");
  choices.innerHTML = "";
  const all = $("all-moves");
  all.innerHTML = "";
  for (const m of table.moves) all.add(new Option(m.text, m.id));
  $("all").hidden = !table.moves.length;
  const mine = selected === null ? [] : movesOf(selected);
  $("rotate").hidden = !mine.some(m => m.rot === 1 && m.cell !== null);
  const byCell = new Map();
  for (const m of mine) {
    if (m.cell !== null && !m.discard && (m.rot === rot || !mine.some(o => o.rot === 1))) {
      if (!byCell.has(m.cell)) byCell.set(m.cell, []);
      byCell.get(m.cell).push(m);
    } else if (m.cell === null || m.discard) {
      choices.append(moveButton(m));
    }
  }
  for (const [cell, ms] of byCell) {
    const g = document.querySelector(`#board g.cell[data-cell="${cell}"]`);
    if (!g) continue;
    g.classList.add("legal");
    g.onclick = () => {
      if (ms.length === 1) return play(ms[0].id);
      choices.innerHTML = "";
      for (const m of ms) choices.append(moveButton(m));
    };
  }
  // Choices without a card of their own (stop a pass, free yourself, steal, bribe, pass with an empty hand).
  for (const m of table.moves.filter(m => m.card === null && !m.cards.length)) choices.append(moveButton(m));
}

function moveButton(m) {
  const b = document.createElement("button");
  b.textContent = m.text;
  b.className = "move";
  b.dataset.action = m.id;
  b.onclick = () => play(m.id);
  return b;
}

async function play(action) {
  try {
    const data = await api(`/api/tables/${table.table}/move`, {action, version: table.version});
    selected = null; rot = 0;
    await animate(data);
  } catch (e) {
    showError(e.message);
    if (table) loadTable(table.table);
  }
}

// ---- replays -------------------------------------------------------------------------------------------------
async function loadReplay(body) {
  try {
    const r = await api("/api/replays", body);
    const sel = $("r-viewer");
    sel.innerHTML = "";
    sel.add(new Option("public view", "public"));
    sel.add(new Option("omniscient", "omniscient"));
    for (let s = 0; s < r.players; s++) sel.add(new Option(`seat ${s}`, String(s)));
    replay = {id: r.replay, frames: [], i: 0, timer: null};
    await loadFrames();
  } catch (e) { showError(e.message); }
}

let framesTicket = 0;  // answers can arrive out of order: only the latest request's frames are shown

async function loadFrames() {
  const ticket = ++framesTicket;
  try {
    const data = await api(`/api/replays/${replay.id}?viewer=${encodeURIComponent($("r-viewer").value)}`);
    if (ticket !== framesTicket) return;  // the viewer was changed again while this answer was on its way
    replay.frames = data.frames;
    $("r-slider").max = data.frames.length - 1;
    $("viewer").hidden = false;
    showError("");
    showFrame(Math.min(replay.i, data.frames.length - 1));
  } catch (e) { if (ticket === framesTicket) showError(e.message); }
}

function showFrame(k) {
  replay.i = Math.max(0, Math.min(replay.frames.length - 1, k));
  const f = replay.frames[replay.i];
  $("r-frame").innerHTML = f.svg;
  $("r-caption").textContent = f.caption;
  $("r-slider").value = replay.i;
  $("r-pos").textContent = `${replay.i} / ${replay.frames.length - 1}` + (f.round_end ? " (end of round)" : "");
}

function toggleReplayPlay() {
  if (replay.timer) { clearInterval(replay.timer); replay.timer = null; $("r-playbtn").textContent = "play"; return; }
  $("r-playbtn").textContent = "pause";
  replay.timer = setInterval(() => {
    if (replay.i >= replay.frames.length - 1) toggleReplayPlay(); else showFrame(replay.i + 1);
  }, 700);
}

// ---- start ---------------------------------------------------------------------------------------------------
function route() {
  const m = location.hash.match(/^#table=([\w-]+)/);
  if (m && (!table || table.table !== m[1])) { tab("play"); loadTable(m[1]); }
  if (location.hash === "#replay") { tab("replay"); if (options.log_replay) loadReplay({log: true}); }
}

async function start() {
  $("tab-play").onclick = () => tab("play");
  $("tab-replay").onclick = () => tab("replay");
  $("f-game").onchange = gameChanged;
  $("r-game").onchange = rGameChanged;
  $("new-table").onsubmit = newTable;
  $("rotate").onclick = () => { rot = 1 - rot; drawHand(); drawMoves(); };
  $("all-play").onclick = () => play(+$("all-moves").value);
  $("ro-close").onclick = () => { $("round-over").hidden = true; };
  document.addEventListener("click", skipAnimation, true);
  document.addEventListener("keydown", skipAnimation, true);
  const speed = $("anim-speed"), ms = String(animationMs());
  if (![...speed.options].some(o => o.value === ms)) speed.add(new Option(`${ms} ms`, ms));
  speed.value = ms;
  speed.onchange = () => localStorage.setItem(ANIM_KEY, speed.value);
  const motion = matchMedia("(prefers-reduced-motion: reduce)");
  const setMotion = () => { document.body.dataset.motion = motion.matches ? "reduced" : "full"; };
  motion.addEventListener("change", setMotion);
  setMotion();
  $("replay-form").onsubmit = ev => {
    ev.preventDefault();
    const actions = $("r-actions").value.trim().split(/[\s,]+/).filter(Boolean).map(Number);
    loadReplay({game: $("r-game").value, players: +$("r-players").value, seed: +$("r-seed").value, actions});
  };
  $("r-log").onclick = () => loadReplay({log: true});
  $("r-viewer").onchange = loadFrames;
  $("r-prev").onclick = () => showFrame(replay.i - 1);
  $("r-next").onclick = () => showFrame(replay.i + 1);
  $("r-slider").oninput = e => showFrame(+e.target.value);
  $("r-playbtn").onclick = toggleReplayPlay;
  window.addEventListener("hashchange", route);
  try {
    options = await api("/api/options");
  } catch (e) { showError(e.message); return; }
  fillGameForm();
  drawMyTables();
  route();
  document.body.dataset.ready = "1";
}
start();
