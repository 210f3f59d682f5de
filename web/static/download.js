// "Download my data": saves everything the service holds about the
// signed-in user (GET /v1/me/export) as a JSON file. It uses app.js's
// call, setStatus and setError; the file is made in the browser from the
// answer and never leaves it.
"use strict";

async function downloadMyData() {
  setError(null);
  try {
    const doc = await call("GET", "/v1/me/export");
    const blob = new Blob([JSON.stringify(doc, null, 2) + "\n"], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "my-memory-" + String(doc.exportedAt || "").slice(0, 10) + ".json";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    const count = (n, what) => `${n} ${what}${n === 1 ? "" : "s"}`;
    const imports = (doc.imports || []).length ? `, ${count(doc.imports.length, "import")}` : "";
    setStatus(`Downloaded ${count(doc.facts.length, "fact")}${imports} and ${count(doc.forgotten.length, "forgotten key")}.`);
  } catch (err) { setError(err); }
}

document.getElementById("download").addEventListener("click", downloadMyData);
