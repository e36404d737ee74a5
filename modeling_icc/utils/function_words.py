"""English function words: excluded from lexical averages (lite, lexical) and from mini's pooled word concreteness.

Our own closed-class list (determiners, pronouns, prepositions, conjunctions,
auxiliaries, common adverbial particles). NLTK's list needs a download and
scikit-learn's drops content words such as "fire", "top" and "computer".
"""

FUNCTION_WORDS = frozenset(
    """
    a an the this that these those some any each every either neither no all both few
    many much more most several such other another what which whose whichever whatever
    i me my mine myself we us our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs themselves
    who whom whoever one ones someone something anyone anything everyone everything
    nobody nothing somebody anybody everybody
    of in on at by for with about against between into through during before after above
    below to from up down out off over under again further onto upon within without
    toward towards across along around among amid behind beside besides beyond near past
    since until till via per than like unlike inside outside underneath throughout
    and or but nor so yet if then because as while although though whether unless whereas
    once where when why how here there
    am is are was were be been being have has had having do does did doing done
    will would shall should can could may might must ought
    not very too also just only even still already ever never always often
    s t d ll m re ve don't doesn't didn't isn't aren't wasn't weren't won't wouldn't
    can't cannot couldn't shouldn't i'm you're he's she's it's we're they're i've you've
    we've they've i'll you'll he'll she'll we'll they'll i'd you'd he'd she'd we'd they'd
    let's that's there's here's what's who's
    """.split()
)
