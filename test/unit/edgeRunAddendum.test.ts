/**
 * What a run adds to the error of the item that failed it (the other items' paid work) goes into
 * the edge as input: the n8n error leaves the edge whole, masked, and nobody edits it afterwards.
 * Every kind of error the edge takes gets the same: its own words first, then the run's, and the
 * run's data beside its own fields.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import { SecretMasker } from '../../nodes/shared/credential/secrets';
import { asNodeError } from '../../nodes/shared/failures/edge';
import { GatewayError } from '../../nodes/shared/failures/errors';

const KEY = 'sk-live-9Vb3Qe7Yt1Mn5Rk2SECRET';
const masker = new SecretMasker([KEY]);
const node = { id: '1', name: 'Make Videos', type: 'n8n-nodes-model-gateway.gatewayVideoGenerate', typeVersion: 1, position: [0, 0], parameters: {} } as INode;
const added = { text: `Tasks of the other items: item 0: task_${KEY}_7.`, fields: { tasks: [{ item: 0, task_id: `task_${KEY}_7` }] } };
const shownTask = 'task_***_7';

describe('asNodeError with what the run adds', () => {
	it('a GatewayError: its hint, its task id whole when the message shortens it, then the run, masked; the run data beside its fields', () => {
		const longId = `task_${'x'.repeat(120)}`;
		const error = new GatewayError({ kind: 'timeout', headline: 'Video task task_xxx… is still running', hint: 'Raise Max Wait.', fields: { task_id: longId }, itemIndex: 2 });
		const nodeError = asNodeError(node, error, 2, masker, added);
		expect(nodeError.description).toBe(`Raise Max Wait. Task ID in full: ${longId} Tasks of the other items: item 0: ${shownTask}.`);
		expect(nodeError.context.itemFields).toMatchObject({ kind: 'timeout', task_id: longId, tasks: [{ item: 0, task_id: shownTask }] });
		expect(JSON.stringify(nodeError.context)).not.toContain(KEY);
	});

	it('a GatewayError without a hint: the run words alone', () => {
		const error = new GatewayError({ kind: 'bad_request', headline: 'Submitting the video task failed', status: 400 });
		expect(asNodeError(node, error, 1, masker, added).description).toBe(`Tasks of the other items: item 0: ${shownTask}.`);
	});

	it('our own n8n error (an input check): its description, then the run; its fields and the run data, masked', () => {
		const own = new NodeOperationError(node, '"Image" is not an image (item 1)', { itemIndex: 1, description: 'Give a PNG or JPEG.' });
		own.context.itemFields = { field: 'image' };
		const nodeError = asNodeError(node, own, 1, masker, added);
		expect(nodeError.description).toBe(`Give a PNG or JPEG. Tasks of the other items: item 0: ${shownTask}.`);
		expect(nodeError.context.itemFields).toEqual({ field: 'image', tasks: [{ item: 0, task_id: shownTask }] });
	});

	it('anything else (a bug): its masked message, the run words as its description, the run data as its fields', () => {
		const nodeError = asNodeError(node, new TypeError(`x is undefined near ${KEY}`), 3, masker, added);
		expect(nodeError.message).toBe('x is undefined near ***');
		expect(nodeError.description).toBe(`Tasks of the other items: item 0: ${shownTask}.`);
		expect(nodeError.context.itemFields).toEqual({ tasks: [{ item: 0, task_id: shownTask }] });
	});

	it('adds nothing when the run adds nothing', () => {
		const error = new GatewayError({ kind: 'bad_request', headline: 'Submitting the video task failed', hint: 'Check the prompt.', status: 400 });
		expect(asNodeError(node, error, 0, masker).description).toBe('Check the prompt.');
		expect(asNodeError(node, new TypeError('boom'), 0, masker).description).toBeUndefined();
	});
});
