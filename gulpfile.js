// Copies what tsc does not: node and credential icons, and codex (.json) files, next to the
// built JavaScript in dist/, keeping their folder structure.
const { src, dest } = require('gulp');

function copyAssets() {
	return src(['nodes/**/*.{svg,png,json}', 'credentials/**/*.{svg,png}'], { base: '.', encoding: false }).pipe(
		dest('dist'),
	);
}

exports['build:assets'] = copyAssets;
