/**
 * Node subtitles (the line under a node on the canvas). n8n evaluates them without input data,
 * so they read `$rawParameter`: a field set by an expression is left out, where `$parameter`
 * would try to resolve it, throw, and n8n would show no subtitle at all. A model picker arrives
 * as its plain value (n8n unwraps resource locators).
 */
import type { INodeProperties } from 'n8n-workflow';

/** The name of the operation chosen in the Operation field of `properties`, as an expression fragment: its options' own names. */
export function operationName(properties: readonly INodeProperties[]): string {
	const options = properties.find(({ name }) => name === 'operation')?.options ?? [];
	const names = Object.fromEntries(options.map((option) => ['value' in option ? String(option.value) : '', option.name]));
	return `${JSON.stringify(names)}[$rawParameter["operation"]]`;
}

/**
 * `<operation>: <field value>`, or just `<operation>` while the field is empty or an expression
 * (or `showField`, an expression fragment, is false; or there is no field). `operation` is an
 * expression fragment too, e.g. `'"Chat"'`.
 */
export function operationSubtitle(operation: string, field?: string, showField = 'true'): string {
	if (field === undefined) return `={{ ${operation} }}`;
	const value = `$rawParameter["${field}"]`;
	const shown = `${showField} && typeof ${value} === "string" && ${value} !== "" && !${value}.startsWith("=")`;
	return `={{ ${operation} + (${shown} ? ": " + ${value} : "") }}`;
}
