import * as fs from 'fs';
import * as path from 'path';
import Ajv2020 from 'ajv/dist/2020';
import type { IDataObject } from 'n8n-workflow';
import { parse } from 'yaml';

import { newPlantBody, readNewPlant } from '../../nodes/GatewayPlantCreate/createPlant';
import { parseJsonKeepingBigIntegers, toInt64Literal } from '../../nodes/shared/items/json';
import { createExecuteContext } from '../helpers/executeContext';

// The store's own OpenAPI 3.1 document: its schemas are JSON Schema 2020-12.
const openapi = parse(fs.readFileSync(path.join(__dirname, '../fixtures/plant-store.openapi.yaml'), 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
// OpenAPI's integer formats (the parsed JSON number of an int64 near 2^63 is a float of that size).
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 63) && n <= 2 ** 63 });
ajv.addSchema({ $id: 'plant-store', components: openapi.components });
const validateNewPlant = ajv.compile({ $ref: 'plant-store#/components/schemas/NewPlant' });

const credentials = { apiKey: 'sk-unit', baseUrl: 'http://127.0.0.1:9' };
const read = (parameters: IDataObject) => {
	const { ctx } = createExecuteContext({ parameters, credentials });
	return readNewPlant(ctx, 0);
};

describe('NewPlant body', () => {
	it.each([
		[{ id: 1, name: 'Monstera' }],
		[{ id: '42', name: 'Fern', tag: 'indoor' }],
		[{ id: '-7', name: 'Cactus', tag: '' }],
		[{ id: '9223372036854775807', name: 'Largest' }],
	])('validates against the OpenAPI NewPlant schema: %j', (parameters) => {
		const body = newPlantBody(read(parameters));
		const parsed = JSON.parse(body);
		expect(validateNewPlant(parsed)).toBe(true);
		expect(validateNewPlant.errors ?? null).toBeNull();
	});

	it('the validator itself rejects bodies the store would refuse', () => {
		expect(validateNewPlant({ name: 'no id' })).toBe(false);
		expect(validateNewPlant({ id: 1.5, name: 'x' })).toBe(false);
		expect(validateNewPlant({ id: 1 })).toBe(false);
	});

	it('sends ids beyond 2^53 with every digit', () => {
		const body = newPlantBody(read({ id: '9007199254740993', name: 'Exact' }));
		expect(body).toBe('{"id":9007199254740993,"name":"Exact"}');
	});

	it('leaves an empty tag out and escapes text', () => {
		expect(newPlantBody(read({ id: 3, name: 'Say "hi"', tag: '  ' }))).toBe('{"id":3,"name":"Say \\"hi\\""}');
	});

	it.each([
		[{ id: '', name: 'x' }, '"ID" must not be empty (item 0)'],
		[{ id: '12.5', name: 'x' }, '"ID" must be a whole number, not "12.5" (item 0)'],
		[{ id: 'abc', name: 'x' }, '"ID" must be a whole number'],
		[{ id: 2 ** 53 + 2, name: 'x' }, '"ID" is beyond 2^53 as a number'],
		[{ id: '9223372036854775808', name: 'x' }, '"ID" is outside the int64 range'],
		[{ id: 1, name: '   ' }, '"Name" must not be empty (item 0)'],
		// An expression that gives an object would be sent as "[object Object]".
		[{ id: { value: 1 }, name: 'x' }, '"ID" must be a whole number, but the expression gave an object (item 0)'],
		[{ id: 1, name: { first: 'Fern' } }, '"Name" must be text, but the expression gave an object (item 0)'],
		[{ id: 1, name: 'Fern', tag: ['a', 'b'] }, '"Tag" must be text, but the expression gave a list (item 0)'],
	])('refuses %j', (parameters, message) => {
		expect(() => read(parameters)).toThrow(message);
	});
});

describe('int64 JSON helpers', () => {
	it('keeps big integers exact when parsing, leaves everything else alone', () => {
		expect(parseJsonKeepingBigIntegers('{"id":9007199254740993,"n":12,"f":-1.5e3,"s":"9007199254740993 \\" x","a":[-9223372036854775808]}')).toEqual({
			id: '9007199254740993',
			n: 12,
			f: -1500,
			s: '9007199254740993 " x',
			a: ['-9223372036854775808'],
		});
	});

	it('turns numbers and digit strings into exact literals', () => {
		expect(toInt64Literal(12)).toEqual({ digits: '12' });
		expect(toInt64Literal(' 0012 ')).toEqual({ digits: '12' });
		expect(toInt64Literal(1.5).problem).toMatch(/whole number/);
	});
});
