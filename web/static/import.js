// "Import from another assistant": the user asks the old assistant to
// list what it remembers (the prompt of import-prompts.json for the
// source chosen, with a Copy button), pastes the answer, and imports it
// (POST /v1/me/imports). The page then asks GET /v1/me/imports/{id}
// until the import is no longer queued, says what was proposed and what
// was left out and why, and lists every imported fact that waits for the
// user's review, with Keep and Discard each and Keep all and Discard all
// per import. It uses app.js's call, load, setStatus, setError,
// factItem, whenLine, categoryName and answerPending; app.js calls
// setupImport, listenImport and renderImportReview.
"use strict";

// importState: prompts by source (import-prompts.json; "" for another
// assistant), maxChars the longest text an import takes (config.json's
// maxImportChars, 0 when the page has no config.json), busy the ID of
// the import being read, replaces the stored values GET
// /v1/me/imports/{id} gave each import's keys.
const importState = { prompts: {}, maxChars: 0, busy: "", replaces: {} };

// IMPORT_POLL_MS is how long the page waits between two reads of an
// import that is still queued.
const IMPORT_POLL_MS = 1000;

// setupImport reads the prompts and the size limit (cfg is config.json,
// null without one) and shows the prompt of the source chosen.
async function setupImport(cfg) {
  importState.maxChars = (cfg && cfg.maxImportChars) || 0;
  if (importState.maxChars) $("import-text").maxLength = importState.maxChars;
  try {
    const res = await fetch("import-prompts.json");
    if (res.ok) importState.prompts = await res.json();
  } catch { /* The prompt stays empty; the import still works. */ }
  showImportPrompt();
  showImportLimit();
}

function listenImport() {
  $("import-source").addEventListener("change", showImportPrompt);
  $("import-copy").addEventListener("click", copyImportPrompt);
  $("import-text").addEventListener("input", showImportLimit);
  $("import-form").addEventListener("submit", submitImport);
}

// importSource is the name of the source chosen: the option's, or the
// name typed for another assistant.
function importSource() {
  const v = $("import-source").value;
  return v || $("import-other").value.trim();
}

// showImportPrompt shows the prompt of the source chosen, and the field
// for the name of another assistant when that is the choice.
function showImportPrompt() {
  const v = $("import-source").value;
  show($("import-other-label"), v === "");
  $("import-other").required = v === "";
  $("import-ask").textContent = `Ask ${v || "the other assistant"} this, then paste its answer below:`;
  $("import-prompt").textContent = importState.prompts[v] || importState.prompts[""] || "";
  $("import-copy").setAttribute("aria-label", `Copy the prompt for ${v || "another assistant"}`);
}

// showImportLimit says how much of the limit the pasted text takes.
function showImportLimit() {
  const n = [...$("import-text").value].length;
  const max = importState.maxChars;
  $("import-limit").textContent = max
    ? `${n.toLocaleString()} of ${max.toLocaleString()} characters at most.`
    : `${n.toLocaleString()} characters.`;
}

async function copyImportPrompt() {
  const source = $("import-source").value || "another assistant";
  try {
    await navigator.clipboard.writeText($("import-prompt").textContent);
    setStatus(`Copied the prompt for ${source}. Paste it into ${source}, then paste its answer here.`);
  } catch {
    // Without clipboard access, the prompt is selected for the user to copy.
    getSelection().selectAllChildren($("import-prompt"));
    setStatus("Could not copy: the prompt is selected, copy it with your keyboard or menu.");
  }
}

function importError(text) {
  $("import-error").textContent = text;
  show($("import-error"), Boolean(text));
}

// submitImport sends the pasted text (POST /v1/me/imports) and follows
// the import until it is read.
async function submitImport(ev) {
  ev.preventDefault();
  importError("");
  const source = importSource();
  const text = $("import-text").value;
  if (!source) { importError("Name the assistant the list comes from."); $("import-other").focus(); return; }
  if (!text.trim()) { importError("Paste the list first."); $("import-text").focus(); return; }
  $("import-go").disabled = true;
  try {
    await settleForget();
    const data = await call("POST", "/v1/me/imports", { source, text });
    importState.busy = data.import.importId;
    $("import-progress").textContent = `Reading the list from ${data.import.source}…`;
    await followImport(data.import.importId);
  } catch (err) {
    if (!err.sessionEnded) importError(err.userMessage || err.detail || err.title || "Could not import.");
  } finally {
    importState.busy = "";
    $("import-go").disabled = false;
  }
}

// followImport asks for import id until it is no longer queued, then
// says what it did and shows its facts for review.
async function followImport(id) {
  for (;;) {
    await new Promise((r) => setTimeout(r, IMPORT_POLL_MS));
    const data = await call("GET", "/v1/me/imports/" + encodeURIComponent(id));
    if (data.import.status === "queued") continue;
    importState.replaces[id] = data.replaces || {};
    $("import-progress").textContent = importSummary(data.import);
    if (data.import.status === "done") $("import-text").value = "";
    showImportLimit();
    await load();
    if ((data.pending || []).length) $("import-review-title").focus();
    return;
  }
}

function count(n, one, many) { return `${n} ${n === 1 ? one : (many || one + "s")}`; }

// leftOutWords say, by reason, what an import found and did not propose.
const leftOutWords = {
  instructions: (n) => count(n, "instruction to the assistant") + " (never kept as a fact)",
  secrets: (n) => count(n, "secret") + " (never kept)",
  known: (n) => count(n, "fact") + " I already remember",
  declined: (n) => count(n, "fact") + " you discarded before",
  ended: (n) => count(n, "plan") + " already over",
  unsupported: (n) => count(n, "fact") + " not found in the text you pasted",
  deletes: (n) => count(n, "request") + " to forget something (an import never forgets)",
  skipped: (n) => count(n, "line") + " not read as a fact about you",
  overCap: (n) => count(n, "fact") + " over the most that can wait for review (keep or discard these, then import again)",
  noRoom: (n) => count(n, "fact") + " with no room left in your memory (remove some facts, then import again)",
};

// importReasons say why an import failed or was refused.
const importReasons = {
  tenant_budget: "the service's reading budget for today is spent. Try again tomorrow",
  daily_imports: "you have imported too many lists in the last 24 hours. Try again tomorrow",
  bad_answer: "the model's answer could not be used. Try again",
  model_failed: "the model could not be reached. Try again later",
};

// importSummary says what import v (an ImportView) did: how many facts it
// proposed, what it left out and why; or why it failed or was refused.
function importSummary(v) {
  if (v.status === "failed" || v.status === "refused") {
    const why = importReasons[v.reason] || (v.reason ? v.reason.replace(/_/g, " ") : "no reason given");
    return `The list from ${v.source} was not imported: ${why}. Nothing was proposed.`;
  }
  const parts = count(v.parts, "part");
  let text = v.proposed
    ? `Read the list from ${v.source} (${parts}): ${count(v.proposed, "fact")} to review below.`
    : `Read the list from ${v.source} (${parts}): nothing new to propose.`;
  const left = Object.keys(leftOutWords).filter((k) => v.leftOut && v.leftOut[k] > 0).map((k) => leftOutWords[k](v.leftOut[k]));
  if (left.length) text += " Left out: " + left.join(", ") + ".";
  return text;
}

// importGroups groups the imported pending facts by import (their
// sourceThreadId), in the order the API lists them.
function importGroups(pending) {
  const by = new Map();
  for (const f of pending) {
    if (f.origin !== "imported" || !f.sourceThreadId) continue;
    const g = by.get(f.sourceThreadId) || { id: f.sourceThreadId, source: f.sourceThreadTitle || "another assistant", facts: [] };
    g.facts.push(f);
    by.set(g.id, g);
  }
  return [...by.values()];
}

// renderImportReview lists the imported facts that wait for the user's
// review, by import, each with its evidence and source and, when its key
// holds a stored fact, "Keep replaces role = nurse".
function renderImportReview() {
  const groups = importGroups(state.pending);
  $("import-groups").replaceChildren(...groups.map((g) => {
    const div = $("import-group").content.firstElementChild.cloneNode(true);
    div.dataset.import = g.id;
    const title = div.querySelector(".import-group-title");
    title.id = "import-group-" + g.id;
    title.textContent = `From ${g.source}: ${count(g.facts.length, "fact")}`;
    const keepAll = div.querySelector(".import-keep-all");
    keepAll.textContent = `Keep all ${g.facts.length} from ${g.source}`;
    keepAll.addEventListener("click", () => keepImport(g));
    const discardAll = div.querySelector(".import-discard-all");
    discardAll.textContent = `Discard all ${g.facts.length} from ${g.source}`;
    discardAll.addEventListener("click", () => discardImport(g));
    const list = div.querySelector(".import-review");
    list.setAttribute("aria-labelledby", title.id);
    list.replaceChildren(...g.facts.map((f) => importItem(f, g)));
    return div;
  }));
  show($("import-review-block"), groups.length > 0);
}

// importItem is one imported pending fact with Keep and Discard.
function importItem(f, g) {
  const stored = state.facts.find((s) => s.key === f.key);
  const was = stored ? stored.value : (importState.replaces[g.id] || {})[f.key];
  const after = [];
  if (was !== undefined) {
    const line = whenLine([`Keep replaces ${f.key} = ${was}`]);
    line.classList.add("fact-replaces");
    after.push(line);
  }
  const li = factItem("pending-item", f, true, true, after, [
    [".pending-keep", "Keep", () => answerPending(f, true, "import-review-title")],
    [".pending-discard", "Discard", () => answerPending(f, false, "import-review-title")],
  ]);
  const cat = li.querySelector(".fact-category");
  if (f.category) cat.textContent = categoryName(f.category);
  else cat.remove();
  return li;
}

// keepImport keeps every fact of import g (POST
// /v1/me/imports/{id}/keep); the status names what was kept.
async function keepImport(g) {
  await settleForget();
  try {
    const data = await call("POST", "/v1/me/imports/" + encodeURIComponent(g.id) + "/keep");
    const kept = data.kept.map((f) => `${f.key} = ${f.value}`);
    const left = g.facts.length - kept.length;
    await load();
    let msg = kept.length ? `Kept ${count(kept.length, "fact")} from ${g.source}: ${kept.join(", ")}.` : `Nothing kept from ${g.source}.`;
    if (left > 0) {
      msg += ` ${count(left, "fact")} still ${left === 1 ? "waits" : "wait"}: your memory is full, and keeping all never drops what you have. Forget some facts to make room, or keep one at a time to replace the one updated longest ago.`;
    }
    setStatus(msg);
    $("import-title").focus();
  } catch (err) { setError(err); }
}

// discardImport discards every fact of import g (DELETE
// /v1/me/imports/{id}/pending); a re-import does not propose them again.
async function discardImport(g) {
  await settleForget();
  try {
    const data = await call("DELETE", "/v1/me/imports/" + encodeURIComponent(g.id) + "/pending");
    await load();
    setStatus(data.discarded
      ? `Discarded ${count(data.discarded, "fact")} from ${g.source}. Importing the same list again will not propose them.`
      : `Nothing to discard from ${g.source}.`);
    $("import-title").focus();
  } catch (err) { setError(err); }
}
