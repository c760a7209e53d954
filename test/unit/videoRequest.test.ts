import type { IDataObject } from 'n8n-workflow';

import { buildSubmitBody, parseSize, readOutputInput, readSubmitInput, readWaitInput, statusPath } from '../../nodes/GatewayVideoGenerate/request';
import { isPageContentType } from '../../nodes/shared/files/binary';
import { networkError } from '../../nodes/shared/failures/errors';
import { isSafeToRepeat } from '../../nodes/shared/wire/retry';
import { createExecuteContext } from '../helpers/executeContext';

const credentials = { apiKey: 'sk-unit', baseUrl: 'http://127.0.0.1:9' };
const contextWith = (parameters: IDataObject) =>
	createExecuteContext({
		parameters: { model: { __rl: true, mode: 'list', value: 'video-2-0-fast-260128' }, prompt: 'a fox', seconds: 5, size: '1280x720', ...parameters },
		credentials,
	}).ctx;

describe('submit body', () => {
	it('maps the node fields onto the gateway fields, seconds as a string, over the extra fields', () => {
		const fields = { model: 'video-2-0-mini-260615', prompt: 'p', seconds: '8', size: '720x1280' };
		expect(buildSubmitBody(fields, { seed: 1, model: 'other' })).toEqual({ seed: 1, model: 'video-2-0-mini-260615', prompt: 'p', seconds: '8', size: '720x1280' });
	});

	it('accepts sizes written <width>x<height> in any common way, and nothing else', () => {
		expect(parseSize('1280x720')).toBe('1280x720');
		expect(parseSize(' 720 X 1280 ')).toBe('720x1280');
		expect(parseSize('1920×1080')).toBe('1920x1080');
		for (const bad of ['', '1280', '1280x', 'x720', '0x720', '1280*720', '1280x720x3', '-1x5', 'big', undefined]) expect(parseSize(bad)).toBeUndefined();
	});

	it('puts the task id into the status path safely', () => {
		expect(statusPath('task_1')).toBe('/v1/video/generations/task_1');
		expect(statusPath('a/b?c')).toBe('/v1/video/generations/a%2Fb%3Fc');
	});
});

describe('reading an item', () => {
	it('reads model, prompt, seconds (number or digits) and size', async () => {
		await expect(readSubmitInput(contextWith({ seconds: '10' }), 0)).resolves.toEqual({
			fields: { model: 'video-2-0-fast-260128', prompt: 'a fox', seconds: '10', size: '1280x720' },
			extraBody: {},
		});
	});

	it('names the field and the item for bad seconds and sizes', async () => {
		await expect(readSubmitInput(contextWith({ seconds: 2.5 }), 0)).rejects.toThrow('"Seconds" must be a whole number, not "2.5" (item 0)');
		await expect(readSubmitInput(contextWith({ seconds: 'five' }), 0)).rejects.toThrow('"Seconds" must be a whole number');
		await expect(readSubmitInput(contextWith({ size: '1280:720' }), 0)).rejects.toThrow('"Size" must have the form <width>x<height> (item 0)');
	});

	it('refuses a poll interval below 5 s and a max wait shorter than one interval', () => {
		expect(readWaitInput(contextWith({}), 0)).toEqual({ intervalMs: 5000, maxWaitMs: 900_000 });
		expect(readWaitInput(contextWith({ options: { pollIntervalSeconds: 7.5, maxWaitSeconds: 60 } }), 0)).toEqual({ intervalMs: 7500, maxWaitMs: 60_000 });
		expect(() => readWaitInput(contextWith({ options: { pollIntervalSeconds: 4.9 } }), 0)).toThrow('"Poll Interval (Seconds)" must be from 5 to 600, not 4.9 (item 0)');
		expect(() => readWaitInput(contextWith({ options: { pollIntervalSeconds: 'soon' } }), 0)).toThrow('"Poll Interval (Seconds)"');
		expect(() => readWaitInput(contextWith({ options: { pollIntervalSeconds: 10, maxWaitSeconds: 9 } }), 0)).toThrow('"Max Wait (Seconds)"');
	});

	it('downloads into "data" unless told otherwise', () => {
		expect(readOutputInput(contextWith({}), 0)).toEqual({ binaryPropertyName: 'data' });
		expect(readOutputInput(contextWith({ options: { binaryPropertyName: 'clip' } }), 0)).toEqual({ binaryPropertyName: 'clip' });
		expect(readOutputInput(contextWith({ options: { downloadVideo: false } }), 0)).toEqual({ binaryPropertyName: undefined });
	});
});

describe('paying once', () => {
	it('repeats a request that starts paid work only when the gateway certainly refused it', () => {
		const once = { idempotent: false };
		// What the transport knows of a failed attempt: a 429 and a refused connection did nothing.
		const refused = networkError('Submitting', { code: 'ECONNREFUSED' }, 'gw.example');
		const dropped = networkError('Submitting', { code: 'ECONNRESET' }, 'gw.example');
		expect(isSafeToRepeat(once, { mayHaveActed: false })).toBe(true);
		expect(isSafeToRepeat(once, refused)).toBe(true);
		expect(isSafeToRepeat(once, { mayHaveActed: true })).toBe(false);
		expect(isSafeToRepeat(once, dropped)).toBe(false);
		expect(isSafeToRepeat({}, { mayHaveActed: true })).toBe(true);
		expect(isSafeToRepeat({}, dropped)).toBe(true);
	});
});

describe('isPageContentType', () => {
	it('tells pages from files', () => {
		for (const page of ['text/html; charset=utf-8', 'application/json', 'application/xml', 'application/problem+json']) expect(isPageContentType(page)).toBe(true);
		for (const file of ['video/mp4', 'application/octet-stream', '', undefined, 'binary/octet-stream']) expect(isPageContentType(file)).toBe(false);
	});
});
