/**
 * n8n lists a collection's options in the order they are defined, and its lint asks for
 * alphabetical order; optionsCollection (descriptions.ts) puts Concurrency first. This puts
 * Concurrency in its place among the others, e.g. after Binary Attachments or Background.
 */
import type { INodeProperties } from 'n8n-workflow';

export function alphabetical(collection: INodeProperties): INodeProperties {
	const options = [...((collection.options ?? []) as INodeProperties[])].sort((a, b) => a.displayName.localeCompare(b.displayName, 'en'));
	return { ...collection, options };
}
