import { sniffFileType } from '../../nodes/shared/files/binary';
import { modelListEntries } from '../../nodes/shared/panel/modelSearch';
import { findModel, guessKind } from '../../nodes/shared/panel/models';

describe('model lists', () => {
	it('falls back to the catalogue when the gateway lists none of the kind', () => {
		expect(modelListEntries('video', []).map((entry) => entry.value)).toEqual([
			'video-2-0-260128',
			'video-2-0-fast-260128',
			'video-2-0-mini-260615',
		]);
		expect(modelListEntries('image', [{ id: 'chat-sonnet-5' }]).map((entry) => entry.value)).toEqual(['img-image-2']);
	});

	it('shows what the gateway lists, catalogue models first and described, then gateway-only ones', () => {
		const entries = modelListEntries('chat', [
			{ id: 'zeta-chat-1' },
			{ id: 'chat-haiku-4-5' },
			{ id: 'chat-sonnet-5' },
			{ id: 'img-image-2' },
			{ id: 'text-embedding-3' },
			{ id: 'video-2-0-260128' },
		]);
		expect(entries.map((entry) => entry.value)).toEqual(['chat-sonnet-5', 'chat-haiku-4-5', 'zeta-chat-1']);
		expect(entries[0].description).toMatch(/speed, quality and cost/);
		expect(entries[2].description).toBe('Listed by the gateway');
	});

	it('filters by the typed text', () => {
		expect(modelListEntries('chat', [], 'OPUS').map((entry) => entry.value)).toEqual(['chat-opus-4-8', 'chat-opus-4-7', 'chat-opus-4-6']);
	});

	it('knows the document limits and guesses kinds of unknown ids', () => {
		expect(findModel('chat-haiku-4-5')?.maxOutputTokens).toBe(64_000);
		// The catalogue's flags were dropped (nothing read them); that chat-fable-5 always thinks is said in its description.
		expect(findModel('chat-fable-5')?.description).toMatch(/always thinks/);
		expect(guessKind('sora-2')).toBe('video');
		expect(guessKind('gpt-image-1')).toBe('image');
		expect(guessKind('whisper-1')).toBeUndefined();
		expect(guessKind('some-model', ['image-generation'])).toBe('image');
	});
});

describe('file type from bytes', () => {
	const hex = (text: string) => Buffer.from(text.replace(/ /g, ''), 'hex');
	it.each([
		[hex('89504e470d0a1a0a 0000000d49484452'), 'image/png', 'png'],
		[hex('ffd8ffe000104a464946'), 'image/jpeg', 'jpg'],
		[Buffer.concat([Buffer.from('RIFF'), hex('24000000'), Buffer.from('WEBPVP8 ')]), 'image/webp', 'webp'],
		[Buffer.from('GIF89a......'), 'image/gif', 'gif'],
		[Buffer.concat([hex('00000020'), Buffer.from('ftypisom'), hex('00000200')]), 'video/mp4', 'mp4'],
		[Buffer.concat([hex('00000014'), Buffer.from('ftypqt  ')]), 'video/quicktime', 'mov'],
		[hex('1a45dfa3a3428681'), 'video/webm', 'webm'],
	])('recognises %#', (bytes, mimeType, extension) => {
		expect(sniffFileType(bytes)).toEqual({ mimeType, extension });
	});

	it('says nothing for unknown or short input', () => {
		expect(sniffFileType(Buffer.from('<html>'))).toBeUndefined();
		expect(sniffFileType(Buffer.alloc(0))).toBeUndefined();
	});

	it('knows a PDF by its header at the very start', () => {
		expect(sniffFileType(Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'))).toEqual({ mimeType: 'application/pdf', extension: 'pdf' });
	});

	// A signature counts only where the format puts it: text that merely contains one is no file of that type.
	it.each([
		['a CSV that mentions a PDF header', 'id,note\n1,%PDF-1.7 header\n'],
		['text with a PDF header after a few bytes', '\r\n%PDF-1.7\n'],
		['text with "ftyp" where an MP4 box type would be', 'abcdftypisom and more words'],
		['text with "RIFF" and "WEBP" where a WebP header would be', 'RIFF1234WEBP is a word, not an image'],
		['a CSV whose first cell is "ftyp"', '0000ftypmp42,1,2,3'],
	])('does not take %s for a file', (_name, text) => {
		expect(sniffFileType(Buffer.from(text, 'latin1'))).toBeUndefined();
	});
});
