"""The sample feedback's texts and authors, by tone.

Written for this project about a fictional product, Driftwood (a notes and task app with
sync); none comes from a published data set. Two things read them: `producers/samples/
build_samples.py`, which writes the sample files the demo and tests replay, and the simulator
(`producers/simulator.py`), which sends feedback of the same shapes live. Each list holds one
tone, so a caller can choose how much of each it sends.
"""

from __future__ import annotations

POSITIVE = [
    "Driftwood's new offline mode is fantastic, synced 300 notes the moment I got off the plane.",
    "Honestly the best notes app I've used in years. Fast, clean, no nonsense.",
    "Love the keyboard shortcuts in Driftwood 4.2, I barely touch the mouse now",
    "Switched the whole team to Driftwood last month and nobody wants to go back. Great job!",
    "The calendar integration just works. Thank you Driftwood team ❤️",
    "Driftwood support answered in 10 minutes and fixed my sync issue. Amazing service.",
    "Dark mode in Driftwood is gorgeous 😍",
    "Finally a task app that respects my time. Driftwood is brilliant.",
    "The markdown export is perfect, exactly what I needed for my thesis. Thanks!",
    "Driftwood on iPad with the pencil is a joy. Handwriting search is excellent.",
    "Really impressed by how quickly Driftwood loads even with 10k notes.",
    "Our standups got so much better since we started sharing Driftwood boards 🙌",
    "Great update! The templates gallery saves me an hour every week.",
    "Driftwood's sharing permissions are clear and simple. Well done.",
    "I adore the new focus mode. Calm, beautiful, productive.",
    "Best purchase of the year: Driftwood Pro. Worth every cent.",
    "The search in Driftwood is ridiculously good, found a note from 2021 in a second",
    "Thanks for listening to feedback, the tag filter is exactly what we asked for!",
    "Driftwood made onboarding our interns painless. Excellent docs too.",
    "Wow, the web clipper is smooth. Love it 🔥",
    "Five stars. Driftwood is reliable, fast and pleasant to use.",
    "The recurring tasks feature is superb, it even handles last-Friday-of-month.",
    "So happy with the Linux app, it feels native and snappy.",
    "Driftwood's end-to-end encryption gives me real peace of mind. Thank you.",
    "Just wanted to say the team behind Driftwood rocks 🚀",
    "The new widgets on Android are lovely and actually useful.",
    "Impressive: sync conflict resolution showed both versions side by side. Perfect.",
    "Driftwood helped me finally organize my recipes. Delightful app.",
    "Amazing how stable Driftwood has been, not a single crash in a year.",
    "The API is well designed and the docs are great. Built my integration in an afternoon.",
    "Driftwood is awesome for research notes, backlinks are a game changer.",
    "Love love love the new gestures on mobile 😊",
    "Happy customer here: great value, great support, great product.",
    "Kudos to Driftwood for the accessibility work, VoiceOver support is excellent.",
    "The import from other apps worked flawlessly, all 2,000 notes with attachments.",
]

NEGATIVE = [
    "Driftwood lost my notes after the update. Three hours of work gone. Furious.",
    "Sync has been broken for two days and support hasn't answered. Terrible.",
    "The app crashes every time I open a PDF attachment. Useless right now.",
    "Why did Driftwood remove the sidebar option? This redesign is awful.",
    "Paying for Pro and still getting 'sync failed' errors every hour. Not acceptable.",
    "Driftwood drains my battery like crazy since 4.2. Please fix this.",
    "The login loop on Android is driving me insane. Can't access anything.",
    "Worst update ever. Everything is slower and the search is broken.",
    "Driftwood charged me twice for the annual plan and nobody replies to my emails 😡",
    "Attachments over 20 MB silently fail to upload. Lost a client contract because of this.",
    "The new pricing is a rip-off. Cancelling my subscription.",
    "Notifications are completely broken, missed two deadlines this week thanks to Driftwood.",
    "I hate the new font. Hard to read and ugly.",
    "Driftwood's web app freezes when a note has more than a few tables. Very frustrating.",
    "Data export is corrupted, half my images are missing. This is a disaster.",
    "Support closed my ticket without fixing anything. Disappointed and angry.",
    "Offline mode deleted my edits when it came back online. Unbelievably bad.",
    "The iOS app keeps logging me out. Annoying and unreliable.",
    "Shared boards show other people's stale data. Caused a real mess at work today.",
    "Driftwood is painfully slow on Windows, typing lags by a full second.",
    "Terrible experience with the migration tool, duplicated every single note.",
    "The calendar sync created 400 duplicate events. Horrible bug.",
    "Can't believe they broke copy and paste. Basic stuff, Driftwood.",
    "Driftwood ate my meeting notes 😭 never trusting autosave again",
    "The mobile app is bloated and sluggish now. Really disappointing.",
    "Two-factor codes from Driftwood never arrive. Locked out of my account.",
    "Printing is broken, every page comes out blank. Awful.",
    "Driftwood's customer service is rude and unhelpful.",
    "After the update my tags are gone. All of them. Why?!",
    "I regret upgrading. The new editor is buggy and crashes constantly.",
    "Dropped Driftwood today. Too many bugs, too little care.",
    "The sync conflict dialog overwrote the newer version. Lost a day of writing.",
    "Why is the Linux build always three versions behind? Feels abandoned.",
    "Search returns nothing for words I know are in my notes. Broken and useless.",
    "The app won't even start on my Chromebook anymore. Fail.",
]

NEUTRAL = [
    "Does Driftwood support exporting to OPML?",
    "Is there a way to set a default notebook for the web clipper?",
    "Driftwood 4.3 is rolling out to Android users this week.",
    "How do I move tasks between boards in Driftwood?",
    "Which plan includes version history?",
    "Trying Driftwood for the first time today.",
    "Driftwood has a keyboard shortcut list under Help > Shortcuts.",
    "Can I self-host Driftwood's sync server?",
    "Our team uses Driftwood for meeting notes and Jira for tickets.",
    "The Driftwood changelog mentions a new API rate limit.",
    "Is the Driftwood API documented somewhere besides the help center?",
    "Anyone know if Driftwood works on Windows on ARM?",
    "Driftwood stores attachments in the cloud unless you turn on local-only mode.",
    "What is the maximum note size in Driftwood?",
    "Reading the Driftwood privacy policy before we roll it out.",
    "Driftwood offers an education discount, apply with a school email.",
    "I use Driftwood on my laptop and my phone.",
    "Is there a Driftwood integration for Zapier?",
    "The release notes for 4.2 are on the Driftwood blog.",
    "Setting up Driftwood for a team of twelve next Monday.",
    "How does Driftwood handle time zones for reminders?",
    "Driftwood uses Markdown for formatting.",
    "Looking for a guide on Driftwood's import from CSV.",
    "Will Driftwood add a Linux ARM build?",
    "Driftwood's status page shows all systems operational.",
]

MIXED = [
    "Love the new editor but sync is still flaky on my phone.",
    "Great features, terrible performance on older laptops.",
    "Driftwood's design is beautiful, shame the search is so slow.",
    "Support was friendly but the bug is still there after a week.",
    "The price went up, but honestly the AI summaries are worth it.",
    "Good app overall, though the Android widget crashes sometimes.",
    "Offline mode is excellent; the conflict handling is not.",
    "I like Driftwood a lot, I just wish exports kept my formatting.",
    "Fast on desktop, painfully slow on mobile.",
    "Templates are great, the template editor is confusing.",
    "Driftwood fixed the sync bug, but now notifications are broken.",
    "Nice update, although the new icons are hard to tell apart.",
]

SARCASM = [
    "Oh great, another update that moves every button. Just what I needed 🙃",
    "Wow Driftwood, deleting my notes is a bold new feature. Love it.",
    "Nothing says productivity like a spinning sync icon for 40 minutes.",
    "Thanks Driftwood, now I get to write my thesis twice. So grateful.",
    "Sure, who needs working search in a notes app anyway.",
    "Fantastic, the app logged me out in the middle of a presentation. Brilliant timing.",
    "I just love paying more for fewer features. Thanks, Driftwood!",
    "Yay, a new loading screen. Truly the innovation we were waiting for.",
]

EMOJI = [
    "Driftwood 😍😍😍",
    "🔥🔥 the new Driftwood boards 🔥🔥",
    "sync broken again 😤😤",
    "👍",
    "Driftwood + coffee = ☕️📝✅",
    "😭😭😭 where did my notes go",
    "🙏 please bring back the old sidebar",
    "💯 best notes app",
]

NON_ENGLISH = [
    ("de", "Driftwood ist großartig, die Synchronisierung funktioniert endlich zuverlässig."),
    ("de", "Seit dem Update stürzt die App ständig ab. Sehr ärgerlich."),
    ("fr", "J'adore Driftwood, la recherche est incroyablement rapide !"),
    ("fr", "La synchronisation ne marche plus depuis hier, c'est pénible."),
    ("es", "Driftwood es la mejor aplicación de notas que he probado."),
    ("es", "Perdí todas mis notas después de la actualización. Terrible."),
    ("pt", "Adorei o novo modo escuro do Driftwood!"),
    ("it", "L'app è lenta e si blocca spesso. Deluso."),
    ("nl", "Driftwood werkt prima op mijn telefoon."),
    ("ja", "Driftwoodの新しいエディタはとても使いやすいです。"),
    ("ja", "同期がまた失敗しました。困ります。"),
    ("pl", "Świetna aplikacja, polecam każdemu."),
]

LONG = (
    "I have been using Driftwood every day for almost three years, first for university and now at work, "
    "and I want to give some detailed feedback because I care about this product. The good: the editor is "
    "fast, the keyboard shortcuts are thoughtful, and the search is the best I have used anywhere. Offline "
    "mode has saved me more than once on trains and planes. The not so good: since version 4.2 the sync "
    "engine sometimes shows a conflict for notes I only edited on one device, and resolving it by hand is "
    "tedious when it happens to twenty notes at once. The mobile app also feels heavier than it used to; it "
    "takes four or five seconds to open on my two-year-old phone, where it used to be instant. Exports to "
    "Markdown lose the checkbox state of tasks, which matters to me because I archive finished projects "
    "that way. Support has always been kind, and the team clearly listens, which is why I am writing this "
    "instead of just leaving. Please look at the sync conflicts first; everything else I can live with. "
)

SLACK_EXTRA = [
    "Customer on the Acme account says Driftwood's SSO login fails since this morning.",
    "Heard from three users today that the new onboarding checklist is really helpful!",
    "Sales call feedback: prospect loved the shared boards, worried about the price.",
    "Ticket #4411: export to PDF cuts off long tables. Customer is annoyed.",
    "Big thanks from the Northwind team, the API webhooks work perfectly now.",
    "User reports the Windows installer is blocked by their antivirus. Not great.",
    "Beta testers are happy with the new gestures, no crashes reported this week.",
    "A customer says the annual invoice shows the wrong VAT number.",
    "Feedback from the webinar: people want a Gantt view.",
    "Enterprise customer is very unhappy with the sync outage yesterday, considering leaving.",
]

AUTHORS = [
    "mara_k",
    "devon.writes",
    "lukas_b",
    "priya_notes",
    "tom_h",
    "sofia.r",
    "jin_park",
    "amelie_f",
    "oscar_dev",
    "nadia_t",
    "ravi.codes",
    "helen_m",
    "kofi_a",
    "ines_g",
    "yuki_s",
    "ben_ops",
]
SLACK_USERS = ["U04ALICE01", "U04BOBBY02", "U04CARLA03", "U04DIEGO04", "U04EMMA005", "U04FRANK06"]

# Posts of a release that went wrong: the release sample's burst and the simulator's.
RELEASE_NEGATIVE = [
    "Driftwood 5.0 deleted half my notes. Terrible update.",
    "The 5.0 update broke sync completely, awful.",
    "Since 5.0 Driftwood crashes every time I open a board. Horrible.",
    "Worst release ever, the editor lost my changes twice today.",
    "5.0 is a disaster: search is broken and everything is slow.",
    "I hate the new Driftwood 5.0, my tasks are gone. Furious.",
    "Driftwood 5.0 keeps logging me out. So frustrating and annoying.",
    "Terrible: the 5.0 sync duplicated every note. Awful mess.",
]
