// fg_script.js - runs the script of an opreport flame graph (tools/opreport/flamegraph.c)
// under node with a small stand-in for the SVG DOM, and checks what a click
// and a search do: node fg_script.js FILE.svg FRAME REGEX
// FRAME: a frame name to zoom into (it must then span the width, its callers
// too, faded, and frames outside it hide; Reset Zoom puts every frame back);
// REGEX: a search whose "Matched: P%" must equal the share of the matching
// frames' samples, nested matches counted once. Prints "ok" or why not.
// SPDX-License-Identifier: MIT
"use strict";
const fs = require("fs");
const [file, frameName, regex] = process.argv.slice(2);
const svg = fs.readFileSync(file, "utf8");

function decode(s) {
	return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&amp;/g, "&");
}
class El {
	constructor(tag, attrs, text) {
		this.tag = tag;
		this.attrs = Object.assign({}, attrs);
		this.textContent = text || "";
		this.kids = [];
		this.style = { display: /display: none/.test(attrs.style || "") ? "none" : "" };
	}
	getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; }
	setAttribute(k, v) { this.attrs[k] = String(v); }
	removeAttribute(k) { delete this.attrs[k]; }
	getElementsByTagName(t) { return this.kids.filter((k) => k.tag === t); }
}
function attrsOf(s) {
	const a = {};
	for (const m of s.matchAll(/([\w:-]+)="([^"]*)"/g))
		a[m[1]] = decode(m[2]);
	return a;
}
const byId = {};
for (const m of svg.matchAll(/<text ([^>]*id="[^"]*"[^>]*)>([^<]*)<\/text>/g)) {
	const a = attrsOf(m[1]);
	byId[a.id] = new El("text", a, decode(m[2]));
}
const framesEl = new El("g", {});
byId.frames = framesEl;
const re = /<g ([^>]*)><title>([^<]*)<\/title><rect ([^>]*)\/><text ([^>]*)>([^<]*)<\/text><\/g>/g;
for (const m of svg.matchAll(re)) {
	const g = new El("g", attrsOf(m[1]));
	g.kids.push(new El("title", {}, decode(m[2])), new El("rect", attrsOf(m[3])),
		new El("text", attrsOf(m[4]), decode(m[5])));
	framesEl.kids.push(g);
}
const document = { getElementById: (id) => byId[id], documentElement: {} };
const window = { addEventListener() {}, prompt: () => regex, alert: (s) => { throw new Error(s); } };
const script = svg.match(/<!\[CDATA\[([\s\S]*?)\]\]>/)[1];
const api = new Function("document", "window",
	script + "\nreturn { init, zoom, unzoom, search, reset_search, frames };")(document, window);

function fail(why) {
	console.log("FAIL: " + why);
	process.exit(1);
}
const W = +svg.match(/var WIDTH = (\d+)/)[1], M = +svg.match(/MARGIN = (\d+)/)[1];
const x = (g) => +g.getElementsByTagName("rect")[0].getAttribute("x");
const w = (g) => +g.getElementsByTagName("rect")[0].getAttribute("width");
const shown = (g) => g.style.display !== "none";
api.init();
const gs = framesEl.kids;
if (!gs.length)
	fail("no frames found in " + file);
const before = gs.map((g) => [x(g), w(g)]);
const z = gs.find((g) => g.fg.name === frameName);
if (!z)
	fail("no frame " + frameName);
z.onclick.call(z);
if (Math.abs(x(z) - M) > 0.01 || Math.abs(w(z) - (W - 2 * M)) > 0.01)
	fail("zoomed frame at x " + x(z) + " width " + w(z));
if (byId.unzoom.style.display === "none")
	fail("no Reset Zoom after a click");
let callers = 0, inside = 0, hidden = 0;
for (const g of gs) {
	const f = g.fg, isCaller = f.y > z.fg.y && f.s <= z.fg.s && f.s + f.n >= z.fg.s + z.fg.n;
	const isInside = f.y <= z.fg.y && f.s >= z.fg.s && f.s + f.n <= z.fg.s + z.fg.n;
	if (isCaller) {
		callers++;
		if (!shown(g) || Math.abs(w(g) - (W - 2 * M)) > 0.01 || g.getAttribute("opacity") !== "0.6")
			fail("caller " + f.name + " not full width and faded");
	} else if (isInside) {
		inside++;
		const want = f.n * (W - 2 * M) / z.fg.n;
		if (!shown(g) || Math.abs(w(g) - want) > 0.01)
			fail(f.name + " inside the zoomed frame: width " + w(g) + ", expected " + want);
	} else {
		hidden++;
		if (shown(g))
			fail(f.name + " outside the zoomed frame is shown");
	}
}
if (!callers || !hidden)
	fail("zoom: " + callers + " callers, " + inside + " inside, " + hidden + " hidden");
api.unzoom();
gs.forEach((g, i) => {
	if (!shown(g) || Math.abs(x(g) - before[i][0]) > 0.011 || Math.abs(w(g) - before[i][1]) > 0.011)
		fail("after Reset Zoom " + g.fg.name + " is not back");
});
api.search(regex);
const rx = new RegExp(regex), hits = gs.filter((g) => g.fg.root === false && rx.test(g.fg.name));
const total = +svg.match(/TOTAL = (\d+)/)[1];
let covered = 0, end = 0;
hits.map((g) => g.fg).sort((a, b) => a.s - b.s).forEach((f) => {
	if (f.s + f.n > end) {
		covered += f.s + f.n - Math.max(f.s, end);
		end = f.s + f.n;
	}
});
const want = "Matched: " + (100 * covered / total).toFixed(1) + "%";
if (!hits.length || byId.matched.textContent !== want)
	fail("search " + regex + ": '" + byId.matched.textContent + "', expected '" + want + "'");
if (hits.some((g) => g.getElementsByTagName("rect")[0].getAttribute("fill") !== "rgb(230,0,230)"))
	fail("a match is not highlighted");
api.reset_search();
if (gs.some((g) => g.getElementsByTagName("rect")[0].getAttribute("fill") !== g.fg.fill))
	fail("colours not restored after the search");
console.log("ok: " + callers + " callers, " + inside + " inside, " + hidden + " hidden; " + want);
