/**
 * Review r7 (round four, seventh session): field errors that say what a wrong value is (validate.ts
 * describeValue, now the one describer of readList and readText).
 */
import { readAttachmentNames } from '../../nodes/shared/chat/chatInput';
import { createExecuteContext } from '../helpers/executeContext';

describe('review r7: a list that holds a missing value says so in words', () => {
	const { ctx } = createExecuteContext({ parameters: {}, credentials: { apiKey: 'sk-r7-review-0123456789abcdef', baseUrl: 'http://127.0.0.1:9' } });

	// Red on r7 (it.failing): an expression such as {{ [$json.photo, $json.scan] }} whose second
	// field is missing gives ['photo', undefined]; describeValue words it `a ${typeof value}`:
	// "it holds a undefined", the "a object" kind of wording aec7298 meant to end.
	it.failing('["photo", undefined] is refused naming undefined, never "a undefined"', () => {
		expect(() => readAttachmentNames(ctx, 0, ['photo', undefined])).toThrow('"Binary Attachments" must be a list of texts, but it holds undefined (item 0)');
	});
});
