"""The sample viewer inside report.html: every logged sample, filtered and opened in the page.

Self-contained (no CDN, no server): the samples are a JSON island in the page and a short script
draws them. Filters by task, skill, mode, configuration and outcome (right, wrong, failed,
unscored); any cell of the report's score tables opens its samples. A sample shows the prompt as
sent (the table as the model saw it), the question, the gold (and its program), and for each run
the raw reply, the program and its output, the extracted answer, the score and why, and how long
its model calls took (with the client's retries). With two or more runs they stand side by side,
and "only where the runs differ" keeps the samples on which their scores differ. Everything from a reply is written as text, never as markup.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# the page holds at most this many samples and this much of each prompt (samples.jsonl has all)
MAX_SAMPLES, MAX_PROMPT_CHARS, MAX_TEXT_CHARS = 5000, 20000, 8000


def _cut(text: Any, limit: int = MAX_TEXT_CHARS) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit:,} more characters in samples.jsonl)"


def _number(value: Any) -> float | None:
    """A timing field of a log row: None where it was not timed (null, NaN in a frame, absent)."""
    return None if value is None or value != value else float(value)


def _prompt_text(messages: list[dict[str, Any]]) -> str:
    return "\n\n".join(f"[{m.get('role')}]\n{m.get('content')}" for m in messages)


def viewer_data(results: Any, runs: list[dict[str, Any]]) -> dict[str, Any]:
    from curate.evaluation.sample_log import read_prompts

    labels = [run.get("label") or run.get("model") for run in runs]
    items: dict[str, dict[str, Any]] = {}
    columns = set(results.columns)
    for row in results.to_dict("records"):
        key = f"{row['sample_id']}|{row['mode']}|{row['config']}"
        item = items.get(key)
        if item is None:
            if len(items) >= MAX_SAMPLES:
                continue
            item = items[key] = {"id": row["sample_id"], "task": row["task"], "skill": row.get("skill", ""),
                                 "mode": row["mode"], "config": row["config"],
                                 "question": _cut(row.get("question", "")), "gold": _cut(row.get("gold")),
                                 "gold_program": _cut(row.get("gold_program", "")),
                                 "tables": list(row.get("table_ids") or []), "prompt": row.get("prompt_id"), "by": {}}
        score = row.get("score")
        item["by"][row["model"]] = {
            "score": None if score is None or score != score else float(score),
            "answer": _cut(row.get("answer")), "reply": _cut(row.get("reply", "")),
            "reason": row.get("reason", "") if "reason" in columns else row.get("details", ""),
            "error": _cut(row.get("error", "")), "failure": row.get("failure") or "",
            "program": _cut(row.get("program", "")), "output": _cut(row.get("program_output", "")),
            "method": row.get("method", ""), "prompt": row.get("prompt_id"),
            "latency": _number(row.get("latency_s")), "retries": _number(row.get("retries"))}
    wanted = {by.get("prompt") for item in items.values() for by in item["by"].values()} - {None}
    prompts: dict[str, str] = {}
    for run in runs:
        if run.get("folder"):
            for key, messages in read_prompts(Path(run["folder"]), wanted - set(prompts)).items():
                prompts[key] = _cut(_prompt_text(messages), MAX_PROMPT_CHARS)
    return {"runs": labels, "items": list(items.values()), "prompts": prompts, "total": int(
        (results["sample_id"] + "|" + results["mode"] + "|" + results["config"]).nunique())}


def viewer_html(results: Any, runs: list[dict[str, Any]]) -> str:
    data = json.dumps(viewer_data(results, runs), ensure_ascii=False, default=str)
    data = data.replace("<", "\\u003c")  # JSON's own escape: nothing in the island can close its script tag
    return (f"<h2 id=\"samples\">Samples</h2>{VIEWER_BODY}"
            f"<script type=\"application/json\" id=\"curate-samples\">{data}</script><script>{VIEWER_SCRIPT}</script>")


VIEWER_BODY = """<style>
#viewer select,#viewer label{margin-right:.8em}#sample-list{max-height:22em;overflow:auto;display:block}
#sample-list tr{cursor:pointer}#sample-list tr:hover{background:#eef}#sample-list tr.open{background:#dde}
#sample-detail pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;border:1px solid #ddd;padding:6px;
max-height:30em;overflow:auto}.runs{display:flex;gap:1em}.runs>div{flex:1;min-width:0}
.right{color:#070}.wrong{color:#b00}.failed{color:#b60}.unscored{color:#666}</style>
<div id="viewer"><p id="viewer-note"></p>
<label>task <select id="f-task"></select></label><label>skill <select id="f-skill"></select></label>
<label>mode <select id="f-mode"></select></label><label>configuration <select id="f-config"></select></label>
<label>outcome <select id="f-outcome"><option value="">any</option><option>right</option><option>wrong</option>
<option>failed</option><option>unscored</option></select></label><label>of run <select id="f-run"></select></label>
<label id="differ-label"><input type="checkbox" id="f-differ"> only where the runs differ</label>
<p id="match-count"></p><table id="sample-list"><thead><tr><th>sample</th><th>task</th><th>mode</th>
<th>configuration</th><th>outcome</th></tr></thead><tbody></tbody></table>
<div id="sample-detail"></div></div>"""

VIEWER_SCRIPT = r"""
(function(){
const D = JSON.parse(document.getElementById('curate-samples').textContent);
const $ = id => document.getElementById(id);
const el = (tag, text, cls) => { const n = document.createElement(tag); if (text !== undefined) n.textContent = text;
  if (cls) n.className = cls; return n; };
function outcome(e){ if (!e) return 'missing'; if (e.failure) return 'failed'; if (e.score === null) return 'unscored';
  return e.score >= 1 ? 'right' : 'wrong'; }
function fill(id, values, any){ const s = $(id); s.innerHTML = ''; if (any) s.appendChild(new Option('any', ''));
  [...new Set(values)].sort().forEach(v => s.appendChild(new Option(v, v))); }
fill('f-task', D.items.map(i => i.task), true); fill('f-skill', D.items.map(i => i.skill), true);
fill('f-mode', D.items.map(i => i.mode), true); fill('f-config', D.items.map(i => i.config), true);
const runs = $('f-run'); D.runs.forEach(r => runs.appendChild(new Option(r, r)));
if (D.runs.length < 2) { $('differ-label').style.display = 'none'; runs.parentNode.style.display = 'none'; }
$('viewer-note').textContent = D.items.length < D.total ? `The page holds ${D.items.length.toLocaleString()} of `
  + `${D.total.toLocaleString()} samples; samples.jsonl in the results folder holds every one.`
  : `${D.total.toLocaleString()} samples. Click a row, or any score in the tables above, to open its samples.`;
function differ(i){ const seen = new Set(D.runs.map(r => { const e = i.by[r]; return e ? outcome(e) + ':' + e.score : 'none'; }));
  return seen.size > 1; }
function matches(){
  const f = {task: $('f-task').value, skill: $('f-skill').value, mode: $('f-mode').value, config: $('f-config').value};
  const want = $('f-outcome').value, run = runs.value || D.runs[0], only = $('f-differ').checked;
  return D.items.filter(i => Object.keys(f).every(k => !f[k] || i[k] === f[k])
    && (!want || outcome(i.by[run]) === want) && (!only || differ(i)));
}
function list(){
  const found = matches(), body = document.querySelector('#sample-list tbody'), run = runs.value || D.runs[0];
  body.innerHTML = '';
  $('match-count').textContent = `${found.length.toLocaleString()} samples match` + (found.length > 500 ? ' (the first 500 listed)' : '');
  found.slice(0, 500).forEach(i => { const tr = el('tr'); const o = outcome(i.by[run]);
    [i.id, i.task, i.mode, i.config].forEach(t => tr.appendChild(el('td', t))); tr.appendChild(el('td', o, o));
    tr.onclick = () => { document.querySelectorAll('#sample-list tr.open').forEach(r => r.classList.remove('open'));
      tr.classList.add('open'); show(i); }; body.appendChild(tr); });
  return found;
}
function section(parent, title, text, cls){ if (text === undefined || text === null || text === '') return;
  parent.appendChild(el('h4', title)); parent.appendChild(el('pre', text, cls)); }
function show(i){
  const d = $('sample-detail'); d.innerHTML = '';
  d.appendChild(el('h3', `${i.id} (${i.task}, ${i.mode}, ${i.config})`));
  section(d, 'Question', i.question, 'question'); section(d, 'Gold', i.gold, 'gold');
  section(d, 'Gold program', i.gold_program, 'gold-program');
  const box = el('div', undefined, 'runs'); d.appendChild(box);
  D.runs.forEach(r => { const e = i.by[r], c = el('div'); box.appendChild(c); c.appendChild(el('h4', r));
    if (!e) { c.appendChild(el('p', 'not in this run')); return; }
    const o = outcome(e); c.appendChild(el('p', `${o}: score ${e.score === null ? '-' : e.score}`, o + ' score'));
    c.appendChild(el('p', e.latency === null || e.latency === undefined ? 'latency: not timed'
      : `latency: ${e.latency.toFixed(2)} s (model calls, all turns); retries: ${e.retries === null ? '-' : e.retries}`,
      'latency'));
    section(c, 'Why', e.reason, 'reason'); section(c, 'Extracted answer', e.answer, 'answer');
    section(c, 'Reply', e.reply || '(no reply)', 'reply'); section(c, 'Program', e.program, 'program');
    section(c, 'Program output', e.output, 'output'); section(c, 'Error', e.error, 'error'); });
  const prompt = D.prompts[i.prompt];
  section(d, 'Prompt as sent: the table as the model saw it (' + i.tables.join(', ') + ')',
          prompt || '(not kept: samples.jsonl names its prompt_id)', 'prompt');
  d.scrollIntoView();
}
['f-task', 'f-skill', 'f-mode', 'f-config', 'f-outcome', 'f-run', 'f-differ'].forEach(id => $(id).onchange = list);
document.querySelectorAll('td[data-filter]').forEach(td => td.onclick = () => {
  const f = JSON.parse(td.dataset.filter);
  ['task', 'skill', 'mode', 'config'].forEach(k => $('f-' + k).value = f[k] || '');
  $('f-outcome').value = ''; if (f.run && D.runs.includes(f.run)) runs.value = f.run;
  const found = list(); if (found.length) { document.querySelector('#sample-list tbody tr').classList.add('open'); show(found[0]); }
});
list();
})();
"""
