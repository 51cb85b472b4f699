// A player's rating beside their name (seats, the lobby's hosts, the start screen): the
// number, marked with a `?` while it is provisional, which the server decides (a deviation of
// 110 or more) and says in each Rating. The leaderboard also shows a settled rating's
// deviation (`1612 ±95`): how far from it the player's strength may be.

import { h } from "./dom.js";
import type { Rating } from "./gen/goti/api/v1/players_pb.js";
import { ratingText, type Words } from "./words.js";

/** The rating as a tag to put after a name; nothing when there is none (the computer, a
 * pass-and-play seat, a host not yet rated). */
export function ratingTag(words: Words, rating: Rating | undefined): HTMLElement | null {
  if (rating === undefined) return null;
  return h(
    "span",
    {
      class: `rating${rating.provisional ? " provisional" : ""}`,
      "data-rating": rating.rating,
      "data-provisional": String(rating.provisional),
      title: rating.provisional ? words.provisionalRating : undefined,
    },
    ratingText(rating),
  );
}

/** The rating with its deviation (`1612 ±95`); a provisional one with its `?` instead, the
 * deviation being too wide to say much. */
export function ratingWithDeviation(words: Words, rating: Rating): HTMLElement {
  return h(
    "span",
    {
      class: `rating${rating.provisional ? " provisional" : ""}`,
      "data-rating": rating.rating,
      "data-deviation": rating.deviation,
      "data-provisional": String(rating.provisional),
      title: rating.provisional ? words.provisionalRating : words.ratingDeviation,
    },
    rating.provisional ? ratingText(rating) : `${rating.rating} ±${rating.deviation}`,
  );
}
