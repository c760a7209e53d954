export interface ParsedForm {
	fields: Record<string, string[]>;
	files: Record<string, Array<{ fileName: string; contentType: string; bytes: Buffer }>>;
}
export class MultipartError extends Error {}
export function parseMultipart(contentType: string | undefined, body: Buffer): ParsedForm;
