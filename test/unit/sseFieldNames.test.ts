/** The SSE reader matches field names whole: it reads them in place, without cutting the line. */
import { ServerSentEventParser } from '../../nodes/shared/wire/sse';

it('takes "dataset", "events" and "identity" for unknown fields, not data, event and id', () => {
	const parser = new ServerSentEventParser();
	const events = parser.push('dataset: x\nevents: x\nidentity: x\ndata: kept\n\nid\nevent\ndata\n\n');
	expect(events).toEqual([
		{ event: 'message', data: 'kept' },
		{ event: 'message', data: '', id: '' },
	]);
});

it('reads a field whose line spans chunks the same as one inside a chunk', () => {
	const whole = new ServerSentEventParser().push('event: delta\ndata: {"a":1}\n\n');
	const parser = new ServerSentEventParser();
	const pieces = ['eve', 'nt: del', 'ta\nda', 'ta: {"a"', ':1}\n', '\n'];
	expect(pieces.flatMap((piece) => parser.push(piece))).toEqual(whole);
	expect(whole).toEqual([{ event: 'delta', data: '{"a":1}' }]);
});
