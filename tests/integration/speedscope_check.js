// speedscope_check.js - tests/integration/opexport.sh: validate a speedscope
// file against the JSON schema shipped in the npm package speedscope (ajv),
// then what the schema cannot say: frame indexes in range, one weight per
// stack, endValue = the sum of the weights. Prints "frame NAME self W" per
// frame (the weight of the stacks it ends). Usage: node speedscope_check.js
// SCHEMA FILE. SPDX-License-Identifier: MIT
'use strict';
const fs = require('fs');
const Ajv = require('ajv');
const schema = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const file = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true });
const validate = ajv.compile(schema);
if (!validate(file)) {
	console.error('schema: ' + ajv.errorsText(validate.errors));
	process.exit(1);
}
const frames = file.shared.frames;
if (!file.profiles.length)
	throw new Error('no profile');
for (const p of file.profiles) {
	if (p.type !== 'sampled')
		throw new Error('not a sampled profile: ' + p.type);
	if (p.samples.length !== p.weights.length || !p.samples.length)
		throw new Error(`${p.samples.length} stacks, ${p.weights.length} weights`);
	let sum = 0;
	const self = new Map();
	p.samples.forEach((st, i) => {
		if (!st.length)
			throw new Error(`stack ${i} is empty`);
		for (const f of st)
			if (!Number.isInteger(f) || f < 0 || f >= frames.length)
				throw new Error(`stack ${i}: frame ${f} of ${frames.length}`);
		sum += p.weights[i];
		const leaf = frames[st[st.length - 1]].name;
		self.set(leaf, (self.get(leaf) || 0) + p.weights[i]);
	});
	if (sum !== p.endValue - p.startValue)
		throw new Error(`weights sum to ${sum}, endValue - startValue is ${p.endValue - p.startValue}`);
	for (const [name, w] of self)
		console.log(`frame ${name} self ${w}`);
}
